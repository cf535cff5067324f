package spl

import (
	"context"
	"testing"

	"github.com/svc-data/svc/infra/clickhouse/chclient"
	"github.com/svc-data/svc/infra/clickhouse/chtest"
	"github.com/svc-data/svc/query"
)

// openTestEngine starts a throwaway engine with the project's helper
// (skipping when SVC_CHDB_LIB is unset) and queries it through chclient,
// the clickhouse-go adapter svcd uses, so values arrive with the types the
// service sees.
func openTestEngine(t testing.TB) testEngine {
	url, _ := chtest.Engine(t)
	c := chtest.Client(t, url)
	return streamEngine{c}
}

// streamEngine implements Engine over query.Engine (chclient.Client.Stream);
// svcd can wire the same few lines.
type streamEngine struct{ c *chclient.Client }

func (e streamEngine) Exec(ctx context.Context, sql string) error { return e.c.Exec(ctx, sql) }

func (e streamEngine) Query(ctx context.Context, sql, queryID string) (*Result, error) {
	var eng query.Engine = e.c
	rows, err := eng.Stream(ctx, sql, query.Options{QueryID: queryID})
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	res := &Result{}
	for _, c := range rows.Columns() {
		res.Columns = append(res.Columns, Column{Name: c.Name, Type: c.Type})
	}
	if res.Rows, err = query.ReadAll(rows); err != nil {
		return nil, err
	}
	s := rows.Summary()
	res.Stats = QueryStats{RowsRead: s.RowsRead, BytesRead: s.BytesRead}
	return res, nil
}
