package edge

import (
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
)

// s3View is a storage override as the API shows it: locations only, never credentials.
type s3View struct {
	Data    catalog.S3Location `json:"data"`
	Backups catalog.S3Location `json:"backups"`
}

type databaseView struct {
	Name      string  `json:"name"`
	S3Storage *s3View `json:"s3_storage"`
}

func viewDatabase(d *catalog.Database) databaseView {
	v := databaseView{Name: d.Name}
	if d.S3 != nil {
		v.S3Storage = &s3View{Data: d.S3.Data, Backups: d.S3.Backups}
	}
	return v
}

func (s *Server) listDatabases(ctx *fasthttp.RequestCtx, p *Principal) error {
	if !p.can(actListDatabases) || p.CustomRole() {
		return forbidden("list databases")
	}
	if err := needCluster(p); err != nil {
		return err
	}
	out := []databaseView{}
	for _, d := range s.deps.Catalog.Databases(p.ClusterID) {
		out = append(out, viewDatabase(d))
	}
	// system is listed for read-only inspection; it is the engine's, filtered per tenant.
	out = append(out, databaseView{Name: catalog.SystemDatabase})
	writeJSON(ctx, 200, map[string]any{"databases": out})
	return nil
}

type s3Request struct {
	Data       *catalog.S3Location `json:"data"`
	Backups    *catalog.S3Location `json:"backups"`
	RoleARN    string              `json:"role_arn"`
	ExternalID string              `json:"external_id"`
}

type createDatabaseRequest struct {
	Name      *string    `json:"name"`
	S3Storage *s3Request `json:"s3_storage"`
}

func (s *Server) createDatabase(ctx *fasthttp.RequestCtx, p *Principal) error {
	if !p.can(actManageDatabases) {
		return forbidden("create databases (admin permission required)")
	}
	if err := needCluster(p); err != nil {
		return err
	}
	var req createDatabaseRequest
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	if req.Name == nil {
		return requiredField("invalid_name", "name")
	}
	var s3 *catalog.S3Storage
	if r := req.S3Storage; r != nil {
		if r.Data == nil || r.Data.Bucket == "" || r.Backups == nil || r.Backups.Bucket == "" {
			return &APIError{Status: 400, Code: "invalid_s3_storage", Field: "s3_storage",
				Message: "s3_storage needs data and backups, each with a bucket (and a path)"}
		}
		// Checked by the table manager (AdmitStorage): names, role, the cluster's
		// database_s3_access, overlaps and verify-s3-access's checks.
		s3 = &catalog.S3Storage{Data: *r.Data, Backups: *r.Backups, RoleARN: r.RoleARN, ExternalID: r.ExternalID}
	}
	if *req.Name == catalog.SystemDatabase {
		return apiErr(409, "already_exists", "database \"system\" is managed by the service", "")
	}
	d, err := s.deps.Tables.CreateDatabase(s.work(), p.OrgID, p.ClusterID, *req.Name, s3)
	if err != nil {
		return err
	}
	writeJSON(ctx, 200, viewDatabase(d))
	return nil
}

func (s *Server) deleteDatabase(ctx *fasthttp.RequestCtx, p *Principal) error {
	if !p.can(actManageDatabases) {
		return forbidden("delete databases (admin permission required)")
	}
	if err := needCluster(p); err != nil {
		return err
	}
	name := stringParam(ctx, "database")
	if name == catalog.SystemDatabase || name == catalog.DefaultDatabase {
		return apiErr(403, "protected", "database "+quoteName(name)+" is managed by the service and cannot be deleted", "")
	}
	if err := s.deps.Tables.DropDatabase(s.work(), p.ClusterID, name); err != nil {
		return err
	}
	writeJSON(ctx, 200, map[string]any{"deleted": true, "name": name})
	return nil
}
