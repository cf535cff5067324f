// Package eventstore groups the adapters of the control plane's event-store port:
// boltstore (one embedded file, the default) and esdb (EventStoreDB / KurrentDB).
package eventstore
