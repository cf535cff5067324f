package promread_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/prometheus/prometheus/storage"

	"github.com/svc-data/svc/infra/clickhouse/chclient"
	"github.com/svc-data/svc/infra/clickhouse/chtest"
	"github.com/svc-data/svc/query/promread"
	"github.com/svc-data/svc/query/promread/promqlsuite"
	"github.com/svc-data/svc/query/promstore"
	"github.com/svc-data/svc/query/sqlquote"
)

// engineStore makes fresh promstore databases on one real engine.
type engineStore struct {
	eng *chclient.Client
	n   atomic.Int64
	// Loader, when set, makes the loader of a database (the remote-write path, say);
	// nil loads by SQL insert.
	Loader func(db string) promread.Loader
}

func newEngineStore(t testing.TB) *engineStore {
	url, _ := chtest.Engine(t)
	eng, err := chclient.Open(chclient.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	return &engineStore{eng: eng}
}

// database creates an empty promstore database.
func (s *engineStore) database(t testing.TB) string {
	db := fmt.Sprintf("promtest_%d", s.n.Add(1))
	ctx := context.Background()
	stmts := append([]string{"CREATE DATABASE IF NOT EXISTS " + sqlquote.Ident(db)}, promstore.DDL(db)...)
	for _, st := range stmts {
		if err := s.eng.Exec(ctx, st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	return db
}

// storage is a promread.Storage over a fresh database, dropped at Close.
func (s *engineStore) storage(t testing.TB) storage.Storage {
	db := s.database(t)
	var loader promread.Loader = promread.SQLLoader{Engine: s.eng, Database: db}
	if s.Loader != nil {
		loader = s.Loader(db)
	}
	return &promread.Storage{
		Queryable: promread.New(promread.Target{Engine: s.eng, Database: db}),
		Loader:    loader,
		OnClose: func() error {
			return s.eng.Exec(context.Background(), "DROP DATABASE IF EXISTS "+sqlquote.Ident(db))
		},
	}
}

// TestUpstreamPromQLSuite runs the upstream PromQL test suite (promqlsuite) against the
// engine-backed storage loaded by SQL insert: the fast check of the read side alone, no
// Kafka needed. cmd/svcd's TestUpstreamPromQLSuite loads through remote write.
func TestUpstreamPromQLSuite(t *testing.T) {
	st := newEngineStore(t)
	promqlsuite.Run(t, 2, st.storage)
}
