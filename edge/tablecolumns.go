package edge

import (
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/statement"
)

// columnView is one column of a table as GET /v1/tables/{table} lists it: doc, the whole
// document, and every path seen in the table's rows with the type a reference to it
// reads as (docs/typing.md).
type columnView struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

func (s *Server) tableColumns(t *catalog.Table) []columnView {
	out := []columnView{}
	for _, c := range statement.DescribeColumns(query.TypedPaths(s.deps.Catalog, t), nil) {
		out = append(out, columnView{Name: c.Name, Type: c.Type})
	}
	return out
}
