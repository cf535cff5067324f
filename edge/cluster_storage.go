package edge

import (
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/tables"
)

type verifyS3Request struct {
	S3Storage        *s3Request                `json:"s3_storage"`
	DatabaseS3Access *catalog.DatabaseS3Access `json:"database_s3_access"`
}

// verifyS3Access checks a cluster's (or database's) customer storage before it is used:
// role assumption with the external id, the `<tag_domain>/cluster` tag on the role and
// the buckets, and a probe object written, read back and deleted. Organization
// administrators only; the answer names each check and never a credential.
func (s *Server) verifyS3Access(ctx *fasthttp.RequestCtx, p *Principal) error {
	if err := orgAdmin(ctx, p, "verify storage"); err != nil {
		return err
	}
	var req verifyS3Request
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	r := req.S3Storage
	if r == nil || r.Data == nil || r.Data.Bucket == "" || r.Backups == nil || r.Backups.Bucket == "" {
		return &APIError{Status: 400, Code: "invalid_s3_storage", Field: "s3_storage",
			Message: "s3_storage needs data and backups, each with a bucket (and a path)"}
	}
	st := catalog.S3Storage{Data: *r.Data, Backups: *r.Backups, RoleARN: r.RoleARN, ExternalID: r.ExternalID}
	tag := ""
	if d := req.DatabaseS3Access; d != nil {
		if d.ExternalID == "" || d.DatabaseBucketTag == "" {
			return &APIError{Status: 400, Code: "invalid_database_s3_access", Field: "database_s3_access",
				Message: "database_s3_access needs external_id and database_bucket_tag"}
		}
		if r.ExternalID != "" && r.ExternalID != d.ExternalID {
			return &APIError{Status: 400, Code: "invalid_database_s3_access", Field: "database_s3_access",
				Message: "s3_storage and database_s3_access must use the same external_id"}
		}
		tag = d.DatabaseBucketTag
	}
	// The checks creation runs (tables.Manager.AdmitStorage calls the same), each
	// reported; bucket names and paths outside the rules are a 400 naming the field.
	v, err := s.deps.Tables.VerifyStorage(s.work(), st, tag)
	if errors.Is(err, tables.ErrNoObjectStorage) {
		return apiErr(503, "storage_unavailable", err.Error(), "")
	}
	if err != nil {
		return err
	}
	writeJSON(ctx, 200, v)
	return nil
}

// orgAdmin fails unless p is a user administering the selected organization.
func orgAdmin(ctx *fasthttp.RequestCtx, p *Principal, what string) error {
	if err := userOnly(p, what); err != nil {
		return err
	}
	if err := needOrganization(ctx, p); err != nil {
		return err
	}
	if p.OrgRole != catalog.RoleAdmin {
		return forbidden(what + " (organization administrators only)")
	}
	return nil
}
