package s3store

import "time"

// SetNow replaces the clock EngineCredentials judges expiry by.
func SetNow(e *EngineCredentials, now func() time.Time) { e.now = now }
