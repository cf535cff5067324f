// Package eventstore groups the adapters of the control plane's event-store port:
// boltstore (one embedded file, the default), pgstore (PostgreSQL, which several nodes
// share) and esdb (EventStoreDB / KurrentDB).
package eventstore
