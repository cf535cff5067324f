package main

import (
	"context"

	"github.com/svc-data/svc/infra/s3store"
	"github.com/svc-data/svc/projections/catalog"
)

// storagePort is the service's object storage as table management's port
// (tables.Storage): verify-s3-access's checks in the catalog's terms.
type storagePort struct{ s3store.Config }

func (p storagePort) VerifyStorage(ctx context.Context, s catalog.S3Storage, bucketTag string) string {
	r := p.Verify(ctx, s3store.Request{Data: s3store.Location(s.Data), Backups: s3store.Location(s.Backups),
		RoleARN: s.RoleARN, ExternalID: s.ExternalID, BucketTag: bucketTag})
	if r.Verified {
		return ""
	}
	return r.Message
}
