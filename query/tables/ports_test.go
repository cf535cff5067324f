package tables_test

import (
	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/query/tables"
)

// The Manager answers the pipeline's ports in the engine data model's types
// (query/target), so query/tables never imports the pipeline: the check that it still
// satisfies them lives here, in a test, where the arrow up is allowed.
var (
	_ pipeline.Tables            = (*tables.Manager)(nil)
	_ pipeline.StorageProber     = (*tables.Manager)(nil)
	_ pipeline.PathRecorder      = (*tables.Manager)(nil)
	_ pipeline.PathTypesRecorder = (*tables.Manager)(nil)
	_ pipeline.Homes             = (*tables.Manager)(nil)
)
