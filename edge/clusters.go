package edge

import (
	"context"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/projections/clusters"
	"github.com/svc-data/svc/query/metrics"
)

// ClusterRunner brings this node's part of a cluster (engine, consumer, topics, `default`
// database) to the phase the control plane records, and returns when it did.
type ClusterRunner interface {
	ReconcileCluster(ctx context.Context, id uuid.UUID) error
	// Resources is what the cluster's engine process on this node got: cores (its
	// max_threads) and memory limit in bytes; ok is false while unknown.
	Resources(id uuid.UUID) (cpuCores float64, memoryBytes int64, ok bool)
	// ReadMetrics reads the cluster's stored metric observations.
	ReadMetrics(ctx context.Context, id uuid.UUID, q metrics.Query) ([]metrics.Point, error)
}

// clusterSizes answers the size catalog (projections/clusters owns it).
// clusterSizes answers the size catalog to any user (session or OAuth token), like the
// rest of the cluster API; it needs no organization.
func (s *Server) clusterSizes(ctx *fasthttp.RequestCtx, p *Principal) error {
	if err := userOnly(p, "read cluster-management endpoints (GET /v1/clusters lists the key's own cluster)"); err != nil {
		return err
	}
	writeJSON(ctx, 200, clusters.Catalog())
	return nil
}

type createClusterRequest struct {
	Name        *string              `json:"name"`
	Replicas    *int                 `json:"replicas"`
	Size        *catalog.ClusterSize `json:"size"`
	Autoscaling *struct {
		MinSize *catalog.ClusterSize `json:"min_size"`
		MaxSize *catalog.ClusterSize `json:"max_size"`
	} `json:"autoscaling"`
	IdleTimeoutMinutes *int                      `json:"idle_timeout_minutes"`
	S3Storage          *s3Request                `json:"s3_storage"`
	DatabaseS3Access   *catalog.DatabaseS3Access `json:"database_s3_access"`
}

// createCluster creates a cluster of the organization: organization administrators only.
func (s *Server) createCluster(ctx *fasthttp.RequestCtx, p *Principal) error {
	if err := userOnly(p, "manage clusters"); err != nil {
		return err
	}
	if err := needOrganization(ctx, p); err != nil {
		return err
	}
	if p.OrgRole != catalog.RoleAdmin {
		return forbidden("create clusters (organization administrators only)")
	}
	var req createClusterRequest
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	field := func(f, msg string) error {
		return &APIError{Status: 400, Code: "invalid_" + f, Field: f, Message: msg, Hint: "see GET /v1/clusters/sizes"}
	}
	if req.Name == nil || *req.Name == "" {
		return field("name", "field \"name\" is required")
	}
	var minSize, maxSize *catalog.ClusterSize
	if a := req.Autoscaling; a != nil {
		minSize, maxSize = a.MinSize, a.MaxSize
	}
	lo, hi, bad := clusters.Shape(req.Replicas, req.Size, minSize, maxSize)
	if bad != nil {
		return field(bad.Field, bad.Message)
	}
	spec := catalog.ClusterCreated{OrgID: p.OrgID, Name: *req.Name, Replicas: *req.Replicas, Size: *req.Size, MinSize: lo, MaxSize: hi}
	spec.IdleTimeoutMinutes = s.cfg.DefaultIdleTimeoutMinutes
	if t := req.IdleTimeoutMinutes; t != nil {
		if err := catalog.CheckIdleTimeout(*t); err != nil {
			return field("idle_timeout_minutes", err.Error())
		}
		spec.IdleTimeoutMinutes = *t
	}
	if d := req.DatabaseS3Access; d != nil {
		if d.ExternalID == "" || d.DatabaseBucketTag == "" {
			return field("database_s3_access", "database_s3_access needs external_id and database_bucket_tag")
		}
		if r := req.S3Storage; r != nil && r.ExternalID != d.ExternalID {
			return field("database_s3_access", "s3_storage and database_s3_access must use the same external_id")
		}
		spec.DatabaseS3Access = d
	}
	if r := req.S3Storage; r != nil {
		if r.Data == nil || r.Data.Bucket == "" || r.Backups == nil || r.Backups.Bucket == "" {
			return field("s3_storage", "s3_storage needs data and backups, each with a bucket")
		}
		spec.S3 = &catalog.S3Storage{Data: *r.Data, Backups: *r.Backups, RoleARN: r.RoleARN, ExternalID: r.ExternalID}
		// The same checks as verify-s3-access, and the same as a database's own storage.
		if err := s.deps.Tables.AdmitStorage(s.work(), spec.S3, spec.DatabaseS3Access); err != nil {
			return err
		}
	}
	var c *catalog.Cluster
	err := s.deps.Tables.ClaimStorage(spec.S3, func() (err error) {
		c, err = s.deps.Commands.CreateClusterWith(s.work(), spec)
		return err
	})
	if err != nil {
		return err
	}
	// Every node's reconciler completes the cluster; this one does it now. A failed start
	// answers the cluster in phase failed with the reason, and is retried with backoff.
	return s.answerCluster(ctx, c.ID)
}
