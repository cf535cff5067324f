// Package catalog is the control plane's domain: its aggregates (organizations,
// clusters, databases with their tables and generations, API keys, users, sessions,
// roles and policies, saved searches), the command handlers that validate a command
// against its aggregate's own event stream and append events at the expected version,
// and the read models every node rebuilds from the log.
//
// Commands (Service) answer after the local read model applied their events, so a
// caller reads its own writes; a concurrent append on the same stream is retried from
// a fresh load, so two commands never both win a rule they race on. Read models
// (Model) are only ever changed by the Projector applying events, in log order.
package catalog
