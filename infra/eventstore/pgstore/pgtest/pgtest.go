// Package pgtest gives a test a PostgreSQL database of its own on the harness's server
// (testenv.Postgres), dropped when the test ends.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/svc-data/svc/infra/testenv"
)

// Database creates an empty database and returns its connection string. It skips
// without SVC_TEST_POSTGRES_URL and fails when the server does not answer.
func Database(t testing.TB) string {
	t.Helper()
	base := testenv.Postgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("SVC_TEST_POSTGRES_URL is set but: %v", err)
	}
	defer conn.Close(ctx)
	name := "t_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return fmt.Sprint(u)
}
