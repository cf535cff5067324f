package chengine

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/infra/testenv"
)

// BenchmarkSelect1 is what chengine adds to a trivial statement, against libchdb running
// the same statement on one of the server's own connections, alternately in the same run
// (the strongest alternative: no HTTP, no pool, no registry):
//
//   - buffered: ServeHTTP in process, SELECT 1 in JSON (a format that is never streamed),
//     against Conn.Query;
//   - stream: ServeHTTP in process, in JSONEachRow (streamed, as svcd's query API asks),
//     against Conn.Stream read to its end;
//   - loopback: the same buffered request over HTTP on 127.0.0.1.
//
// Each reports chengine's and libchdb's ns per statement and their ratio.
//
//	SVC_CHDB_LIB=... go test -run '^$' -bench Select1 ./infra/clickhouse/chengine/
func BenchmarkSelect1(b *testing.B) {
	lib := testenv.Engine(b)
	s, err := New(Config{Path: b.TempDir(), Lib: lib, Listen: "127.0.0.1:0", Pool: 2}, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := s.Shutdown(ctx); err != nil {
			b.Error(err)
		}
	}()
	serve := func(format string) error {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/?default_format="+format, strings.NewReader("SELECT 1")))
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "1") {
			return &exception{text: w.Body.String()}
		}
		return nil
	}
	client := &http.Client{}
	loopback := func() error {
		resp, err := client.Post("http://"+s.Addr()+"/?default_format=JSON", "text/plain", strings.NewReader("SELECT 1"))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return &exception{text: resp.Status}
		}
		return nil
	}
	// The floor runs on a connection of the server's pool, taken for the run.
	sess, err := s.pool.get(ctx, "")
	if err != nil {
		b.Fatal(err)
	}
	query := func() error {
		_, err := sess.conn.Query("SELECT 1", "JSON")
		return err
	}
	stream := func() error {
		st, err := sess.conn.Stream("SELECT 1", "JSONEachRow")
		if err != nil {
			return err
		}
		defer st.Close()
		for {
			if _, err := st.Next(); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
		}
	}
	cases := []struct {
		name         string
		server, base func() error
	}{
		{"buffered", func() error { return serve("JSON") }, query},
		{"stream", func() error { return serve("JSONEachRow") }, stream},
		{"loopback", loopback, query},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var onServer, onConn time.Duration
			for b.Loop() {
				t := time.Now()
				if err := c.server(); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := c.base(); err != nil {
					b.Fatal(err)
				}
				onServer, onConn = onServer+t1.Sub(t), onConn+time.Since(t1)
			}
			b.ReportMetric(float64(onServer.Nanoseconds())/float64(b.N), "chengine-ns/op")
			b.ReportMetric(float64(onConn.Nanoseconds())/float64(b.N), "libchdb-ns/op")
			b.ReportMetric(float64(onServer)/float64(onConn), "ratio")
		})
	}
	s.pool.put(sess)
	client.CloseIdleConnections()
}
