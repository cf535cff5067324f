package main

import (
	"context"

	"github.com/svc-data/svc/infra/s3store"
	"github.com/svc-data/svc/projections/catalog"
)

// storagePort is the service's object storage as table management's port
// (tables.Storage): verify-s3-access's checks in the catalog's terms.
type storagePort struct{ s3store.Config }

func (p storagePort) VerifyStorage(ctx context.Context, s catalog.S3Storage, bucketTag string) catalog.StorageVerification {
	r := p.Verify(ctx, s3store.Request{Data: s3store.Location(s.Data), Backups: s3store.Location(s.Backups),
		RoleARN: s.RoleARN, ExternalID: s.ExternalID, BucketTag: bucketTag})
	v := catalog.StorageVerification{Verified: r.Verified, Message: r.Message, Checks: make([]catalog.StorageCheck, len(r.Checks))}
	for i, c := range r.Checks {
		v.Checks[i] = catalog.StorageCheck(c)
	}
	return v
}
