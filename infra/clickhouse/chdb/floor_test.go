package chdb

import (
	"io"
	"testing"
)

// BenchmarkFloor is libchdb's own cost of a trivial statement on one connection, with
// nothing around it (no HTTP, no pool): the floor of SELECT 1 through chengine and svcd.
//
//	go test -run '^$' -bench Floor ./infra/clickhouse/chdb/
func BenchmarkFloor(b *testing.B) {
	c := connect(b)
	b.Run("query_TSV", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.Query("SELECT 1", "TabSeparated"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("stream_Native", func(b *testing.B) {
		for b.Loop() {
			s, err := c.Stream("SELECT 1", "Native")
			if err != nil {
				b.Fatal(err)
			}
			for {
				if _, err := s.Next(); err == io.EOF {
					break
				} else if err != nil {
					b.Fatal(err)
				}
			}
			s.Close()
		}
	})
	b.Run("set_two_settings", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.Query("SET allow_suspicious_types_in_order_by = 1, readonly = 2", "TabSeparated"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("processes_probe", func(b *testing.B) {
		// What chengine's end-of-stream check (statementGone) cost before issue 17.
		for b.Loop() {
			if _, err := c.Query("SELECT count() FROM system.processes WHERE position(query, concat('/* svc:qid=', {id:String}, ' */')) > 0 AND query_id != queryID()",
				"TabSeparated", Param{Name: "id", Value: "x"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("processes_texts", func(b *testing.B) {
		// The check as chengine runs it since: the texts, searched by the caller.
		for b.Loop() {
			if _, err := c.Query("SELECT query FROM system.processes WHERE query_id != queryID()", "TSVRaw"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("connect_close", func(b *testing.B) {
		for b.Loop() {
			c2, err := Connect("--path=" + dataDir)
			if err != nil {
				b.Fatal(err)
			}
			c2.Close()
		}
	})
}
