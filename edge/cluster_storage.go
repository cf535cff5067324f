package edge

import (
	"context"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/infra/s3store"
	"github.com/svc-data/svc/projections/catalog"
)

// StorageVerifier checks that the service can use a customer's bucket and role.
type StorageVerifier interface {
	Verify(ctx context.Context, r s3store.Request) s3store.Result
}

type verifyS3Request struct {
	S3Storage        *s3Request                `json:"s3_storage"`
	DatabaseS3Access *catalog.DatabaseS3Access `json:"database_s3_access"`
}

// verifyS3Access checks a cluster's (or database's) customer storage before it is used:
// role assumption with the external id, the `<tag_domain>/cluster` tag on the role and
// the buckets, and a probe object written, read back and deleted. Organization
// administrators only; the answer names each check and never a credential.
func (s *Server) verifyS3Access(ctx *fasthttp.RequestCtx, p *Principal) {
	if !orgAdmin(ctx, p, "verify storage") {
		return
	}
	var req verifyS3Request
	if err := readJSON(ctx, &req); err != nil {
		writeError(ctx, err)
		return
	}
	r := req.S3Storage
	if r == nil || r.Data == nil || r.Data.Bucket == "" || r.Backups == nil || r.Backups.Bucket == "" {
		writeError(ctx, &APIError{Status: 400, Code: "invalid_s3_storage", Field: "s3_storage",
			Message: "s3_storage needs data and backups, each with a bucket (and a path)"})
		return
	}
	// Bucket names and paths by the rules creation applies (catalog.S3Storage.Validate):
	// a name that is not a bucket is refused before anything is sent to it.
	loc := catalog.S3Storage{Data: *r.Data, Backups: *r.Backups}
	if err := loc.Validate(); err != nil {
		writeError(ctx, err)
		return
	}
	v := s3store.Request{Data: s3store.Location{Bucket: loc.Data.Bucket, Path: loc.Data.Path},
		Backups: s3store.Location{Bucket: loc.Backups.Bucket, Path: loc.Backups.Path}, RoleARN: r.RoleARN, ExternalID: r.ExternalID}
	if d := req.DatabaseS3Access; d != nil {
		if d.ExternalID == "" || d.DatabaseBucketTag == "" {
			writeError(ctx, &APIError{Status: 400, Code: "invalid_database_s3_access", Field: "database_s3_access",
				Message: "database_s3_access needs external_id and database_bucket_tag"})
			return
		}
		if r.ExternalID != "" && r.ExternalID != d.ExternalID {
			writeError(ctx, &APIError{Status: 400, Code: "invalid_database_s3_access", Field: "database_s3_access",
				Message: "s3_storage and database_s3_access must use the same external_id"})
			return
		}
		v.BucketTag = d.DatabaseBucketTag
	}
	if s.deps.Storage == nil {
		writeError(ctx, apiErr(503, "storage_unavailable", "this service does not use object storage", ""))
		return
	}
	writeJSON(ctx, 200, s.deps.Storage.Verify(s.work(), v))
}

// orgAdmin answers the error and false unless p is a user administering the selected
// organization.
func orgAdmin(ctx *fasthttp.RequestCtx, p *Principal, what string) bool {
	if err := userOnly(p, what); err != nil {
		writeError(ctx, err)
		return false
	}
	if err := needOrganization(ctx, p); err != nil {
		writeError(ctx, err)
		return false
	}
	if p.OrgRole != catalog.RoleAdmin {
		writeError(ctx, forbidden(what+" (organization administrators only)"))
		return false
	}
	return true
}
