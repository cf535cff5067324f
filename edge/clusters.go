package edge

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
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

type sizeEntry struct {
	Size      string  `json:"size"`
	CPUCores  float64 `json:"cpu_cores"`
	MemoryGiB float64 `json:"memory_gib"`
}

// sizeCatalog is what clusters may be made of. Each replica of an embedded cluster is
// one engine process on this machine.
var sizeCatalog = struct {
	MinReplicas    int         `json:"min_number_of_replicas"`
	MaxReplicas    int         `json:"max_number_of_replicas"`
	Sizes          []sizeEntry `json:"sizes"`
	DefaultMinSize sizeEntry   `json:"default_min_size"`
	DefaultMaxSize sizeEntry   `json:"default_max_size"`
}{
	MinReplicas: 1, MaxReplicas: 1,
	Sizes: []sizeEntry{
		{"1 vCPU, 4 GiB", 1, 4}, {"2 vCPU, 8 GiB", 2, 8}, {"4 vCPU, 16 GiB", 4, 16}, {"8 vCPU, 32 GiB", 8, 32},
	},
	DefaultMinSize: sizeEntry{"1 vCPU, 4 GiB", 1, 4},
	DefaultMaxSize: sizeEntry{"8 vCPU, 32 GiB", 8, 32},
}

func (s *Server) clusterSizes(ctx *fasthttp.RequestCtx) { writeJSON(ctx, 200, sizeCatalog) }

func sizeIndex(z *catalog.ClusterSize) int {
	for i, e := range sizeCatalog.Sizes {
		if z != nil && e.CPUCores == z.CPUCores && e.MemoryGiB == z.MemoryGiB {
			return i
		}
	}
	return -1
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
func (s *Server) createCluster(ctx *fasthttp.RequestCtx, p *Principal) {
	if err := userOnly(p, "manage clusters"); err != nil {
		writeError(ctx, err)
		return
	}
	if err := needOrganization(ctx, p); err != nil {
		writeError(ctx, err)
		return
	}
	if p.OrgRole != catalog.RoleAdmin {
		writeError(ctx, forbidden("create clusters (organization administrators only)"))
		return
	}
	var req createClusterRequest
	if err := readJSON(ctx, &req); err != nil {
		writeError(ctx, err)
		return
	}
	field := func(f, msg string) {
		writeError(ctx, &APIError{Status: 400, Code: "invalid_" + f, Field: f, Message: msg, Hint: "see GET /v1/clusters/sizes"})
	}
	switch {
	case req.Name == nil || *req.Name == "":
		field("name", "field \"name\" is required")
		return
	case req.Replicas == nil || *req.Replicas < sizeCatalog.MinReplicas || *req.Replicas > sizeCatalog.MaxReplicas:
		field("replicas", fmt.Sprintf("replicas must be %d to %d", sizeCatalog.MinReplicas, sizeCatalog.MaxReplicas))
		return
	case sizeIndex(req.Size) < 0:
		field("size", "size must be a {cpu_cores, memory_gib} pair of the size catalog")
		return
	}
	spec := catalog.ClusterCreated{OrgID: p.OrgID, Name: *req.Name, Replicas: *req.Replicas, Size: *req.Size,
		MinSize: catalog.ClusterSize{CPUCores: sizeCatalog.DefaultMinSize.CPUCores, MemoryGiB: sizeCatalog.DefaultMinSize.MemoryGiB},
		MaxSize: catalog.ClusterSize{CPUCores: sizeCatalog.DefaultMaxSize.CPUCores, MemoryGiB: sizeCatalog.DefaultMaxSize.MemoryGiB}}
	if a := req.Autoscaling; a != nil {
		if a.MinSize != nil {
			if sizeIndex(a.MinSize) < 0 {
				field("autoscaling", "autoscaling.min_size must be a pair of the size catalog")
				return
			}
			spec.MinSize = *a.MinSize
		}
		if a.MaxSize != nil {
			if sizeIndex(a.MaxSize) < 0 {
				field("autoscaling", "autoscaling.max_size must be a pair of the size catalog")
				return
			}
			spec.MaxSize = *a.MaxSize
		}
	}
	lo, hi, at := sizeIndex(&spec.MinSize), sizeIndex(&spec.MaxSize), sizeIndex(&spec.Size)
	if lo > hi || at < lo || at > hi {
		field("size", "the initial size must fall within autoscaling min_size and max_size")
		return
	}
	spec.IdleTimeoutMinutes = s.cfg.DefaultIdleTimeoutMinutes
	if t := req.IdleTimeoutMinutes; t != nil {
		if *t != 0 && (*t < 15 || *t > 43200) {
			field("idle_timeout_minutes", "idle_timeout_minutes must be 0 (never idle) or 15 to 43,200")
			return
		}
		spec.IdleTimeoutMinutes = *t
	}
	if d := req.DatabaseS3Access; d != nil {
		if d.ExternalID == "" || d.DatabaseBucketTag == "" {
			field("database_s3_access", "database_s3_access needs external_id and database_bucket_tag")
			return
		}
		if r := req.S3Storage; r != nil && r.ExternalID != d.ExternalID {
			field("database_s3_access", "s3_storage and database_s3_access must use the same external_id")
			return
		}
		spec.DatabaseS3Access = d
	}
	if r := req.S3Storage; r != nil {
		if r.Data == nil || r.Data.Bucket == "" || r.Backups == nil || r.Backups.Bucket == "" {
			field("s3_storage", "s3_storage needs data and backups, each with a bucket")
			return
		}
		spec.S3 = &catalog.S3Storage{Data: *r.Data, Backups: *r.Backups, RoleARN: r.RoleARN, ExternalID: r.ExternalID}
		// The same checks as verify-s3-access, and the same as a database's own storage.
		if err := s.deps.Tables.AdmitStorage(s.work(), spec.S3, spec.DatabaseS3Access); err != nil {
			writeError(ctx, err)
			return
		}
	}
	var c *catalog.Cluster
	err := s.deps.Tables.ClaimStorage(spec.S3, func() (err error) {
		c, err = s.deps.Commands.CreateClusterWith(s.work(), spec)
		return err
	})
	if err != nil {
		writeError(ctx, err)
		return
	}
	// Every node's reconciler completes the cluster; this one does it now. A failed start
	// answers the cluster in phase failed with the reason, and is retried with backoff.
	s.answerCluster(ctx, c.ID)
}
