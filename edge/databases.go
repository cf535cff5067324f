package edge

import (
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/tables"
)

// s3View is a storage override as the API shows it: locations only, never credentials.
type s3View struct {
	Data    catalog.S3Location `json:"data"`
	Backups catalog.S3Location `json:"backups"`
}

type databaseView struct {
	Name      string  `json:"name"`
	S3Storage *s3View `json:"s3_storage"`
	// Retention is the default retention of tables created in the database (null:
	// rows kept forever); each table's own is shown by GET /v1/tables/{table}.
	Retention *string `json:"retention"`
}

func viewDatabase(d *catalog.Database) databaseView {
	v := databaseView{Name: d.Name, Retention: nonEmpty(d.Retention)}
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
	Retention *string    `json:"retention"`
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
	// Checked before anything is created, so a bad retention creates nothing.
	if req.Retention != nil {
		if _, err := tables.CheckRetention(*req.Retention, "JSON"); err != nil {
			return err
		}
	}
	d, err := s.deps.Tables.CreateDatabase(s.work(), p.OrgID, p.ClusterID, *req.Name, s3)
	if err != nil {
		return err
	}
	if req.Retention != nil {
		if d, err = s.deps.Tables.SetDatabaseRetention(s.work(), p.ClusterID, d.Name, *req.Retention); err != nil {
			return err
		}
	}
	writeJSON(ctx, 200, viewDatabase(d))
	return nil
}

type patchDatabaseRequest struct {
	Retention *string `json:"retention"`
}

// patchDatabase serves PATCH /v1/databases/{database}: the default retention of tables
// created in it from now on (existing tables keep theirs: PATCH /v1/tables/{table}).
func (s *Server) patchDatabase(ctx *fasthttp.RequestCtx, p *Principal) error {
	if !p.can(actManageDatabases) {
		return forbidden("change databases (admin permission required)")
	}
	if err := needCluster(p); err != nil {
		return err
	}
	name := stringParam(ctx, "database")
	d, ok := s.deps.Catalog.Database(p.ClusterID, name)
	if !ok {
		return apiErr(404, "database_not_found", "database "+quoteName(name)+" does not exist", "list databases with GET /v1/databases")
	}
	var req patchDatabaseRequest
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	if req.Retention != nil {
		var err error
		if d, err = s.deps.Tables.SetDatabaseRetention(s.work(), p.ClusterID, d.Name, *req.Retention); err != nil {
			return err
		}
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
