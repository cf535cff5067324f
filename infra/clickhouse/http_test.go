package clickhouse_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/svc-data/svc/infra/clickhouse/chtest"
)

// These tests speak HTTP directly, for what clickhouse-go does not exercise.

type answer struct {
	status int
	header http.Header
	body   string
}

func post(t *testing.T, base string, params url.Values, body io.Reader, header http.Header) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, base+"/?"+params.Encode(), body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{res.StatusCode, res.Header, string(b)}
}

func TestHTTPInterface(t *testing.T) {
	base, _ := chtest.Engine(t)
	q := func(sql string) answer { return post(t, base, nil, strings.NewReader(sql), nil) }
	wantOK := func(a answer, body string) {
		t.Helper()
		if a.status != 200 || a.body != body {
			t.Fatalf("got %d %q, want 200 %q", a.status, a.body, body)
		}
	}
	wantCode := func(a answer, code string) {
		t.Helper()
		if a.status == 200 || a.header.Get("X-ClickHouse-Exception-Code") != code || !strings.HasPrefix(a.body, "Code: "+code+".") {
			t.Fatalf("got %d %v %q, want exception code %s", a.status, a.header.Get("X-ClickHouse-Exception-Code"), a.body, code)
		}
	}

	res, err := http.Get(base + "/ping")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "Ok.\n" {
		t.Fatalf("/ping = %q", b)
	}

	wantOK(q("CREATE TABLE t (a UInt64, s String) ENGINE = MergeTree ORDER BY a"), "")

	// Query in the URL, data in the body; headers of a statement whose result is known.
	a := post(t, base, url.Values{"query": {"INSERT INTO t FORMAT TSV"}, "query_id": {"ins-1"}},
		strings.NewReader("1\tone\n2\ttwo\n"), nil)
	wantOK(a, "")
	if a.header.Get("X-ClickHouse-Query-Id") != "ins-1" || !strings.Contains(a.header.Get("X-ClickHouse-Summary"), `"written_rows":"2"`) {
		t.Fatalf("insert headers %v", a.header)
	}

	// A gzip request body.
	var zbuf bytes.Buffer
	zw := gzip.NewWriter(&zbuf)
	_, _ = zw.Write([]byte("INSERT INTO t FORMAT JSONEachRow\n{\"a\":3,\"s\":\"three\"}\n"))
	_ = zw.Close()
	wantOK(post(t, base, nil, &zbuf, http.Header{"Content-Encoding": {"gzip"}}), "")

	// Results: explicit FORMAT, parameters, settings for this request only.
	a = post(t, base, url.Values{"param_min": {"2"}}, strings.NewReader("SELECT a, s FROM t WHERE a >= {min:UInt64} ORDER BY a FORMAT JSONEachRow"), nil)
	wantOK(a, "{\"a\":2,\"s\":\"two\"}\n{\"a\":3,\"s\":\"three\"}\n")
	if a.header.Get("X-ClickHouse-Format") != "JSONEachRow" || a.header.Get("X-ClickHouse-Summary") == "" || a.header.Get("X-ClickHouse-Timezone") == "" {
		t.Fatalf("result headers %v", a.header)
	}
	wantOK(post(t, base, url.Values{"max_threads": {"1"}}, strings.NewReader("SELECT getSetting('max_threads')"), nil), "1\n")

	// A format that cannot be streamed chunk by chunk is still one valid document.
	a = q("SELECT number, toString(number) AS s FROM numbers(300000) FORMAT JSON")
	var doc struct {
		Rows int `json:"rows"`
	}
	if err := json.Unmarshal([]byte(a.body), &doc); err != nil || doc.Rows != 300000 {
		t.Fatalf("JSON result: rows %d, %v", doc.Rows, err)
	}

	// Refusals, with the code clickhouse-go turns into a typed exception.
	wantCode(q("SELECT 1; SELECT 2"), "62")
	wantCode(post(t, base, url.Values{"compress": {"1"}}, strings.NewReader("SELECT 1"), nil), "48")
	wantCode(post(t, base, url.Values{"session_id": {"s"}}, strings.NewReader("SELECT 1"), nil), "48")
	wantCode(post(t, base, url.Values{"no_such_setting": {"1"}}, strings.NewReader("SELECT 1"), nil), "115")
	wantCode(post(t, base, url.Values{"database": {"nope"}}, strings.NewReader("SELECT 1"), nil), "81")
	wantCode(q("SELECT 1 INTO OUTFILE '/tmp/x'"), "48")

	// GET is read-only, as on a ClickHouse server.
	res, err = http.Get(base + "/?query=" + url.QueryEscape("INSERT INTO t VALUES (9, 'nine')"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode == 200 || !strings.Contains(string(b), "readonly") {
		t.Fatalf("INSERT over GET: %d %s", res.StatusCode, b)
	}
}

// cutReader yields data and then fails, as a client that goes away mid-body.
type cutReader struct {
	data *strings.Reader
}

func (c *cutReader) Read(p []byte) (int, error) {
	if c.data.Len() == 0 {
		return 0, errors.New("client gone")
	}
	return c.data.Read(p)
}

func TestTruncatedInsertBodyInsertsNothing(t *testing.T) {
	base, conn := chtest.Engine(t)
	ctx := testCtx(t)
	if err := conn.Exec(ctx, "CREATE TABLE t (a UInt64) ENGINE = MergeTree ORDER BY a"); err != nil {
		t.Fatal(err)
	}
	// Whole lines, then the body stops without its end: not an insert of those lines.
	var rows strings.Builder
	for i := range 1000 {
		rows.WriteString(`{"a":` + strings.Repeat("1", 1+i%5) + "}\n")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		base+"/?"+url.Values{"query": {"INSERT INTO t FORMAT JSONEachRow"}}.Encode(),
		&cutReader{data: strings.NewReader(rows.String())})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
		if res.StatusCode == 200 {
			t.Fatal("a cut body was acknowledged")
		}
	}
	var n uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d rows of a cut body were inserted", n)
	}
}

func TestCompression(t *testing.T) {
	base, _ := chtest.Engine(t)
	ctx := testCtx(t)
	gz := chtest.Open(t, base, func(o *ch.Options) {
		o.Compression = &ch.Compression{Method: ch.CompressionGZIP}
	})
	if err := gz.Exec(ctx, "CREATE TABLE t (a UInt64, s String) ENGINE = MergeTree ORDER BY a"); err != nil {
		t.Fatal(err)
	}
	batch, err := gz.PrepareBatch(ctx, "INSERT INTO t")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10_000 {
		if err := batch.Append(uint64(i), strings.Repeat("s", i%30)); err != nil {
			t.Fatal(err)
		}
	}
	if err := batch.Send(); err != nil {
		t.Fatalf("gzip batch: %v", err)
	}
	var n uint64
	if err := gz.QueryRow(ctx, "SELECT count() FROM t").Scan(&n); err != nil || n != 10_000 {
		t.Fatalf("count = %d, %v", n, err)
	}

	// Native block compression (LZ4) is refused with an exception that says so.
	lz4, err := ch.Open(&ch.Options{Addr: []string{strings.TrimPrefix(base, "http://")}, Protocol: ch.HTTP,
		Compression: &ch.Compression{Method: ch.CompressionLZ4}})
	if err != nil {
		t.Fatal(err)
	}
	defer lz4.Close()
	err = lz4.QueryRow(ctx, "SELECT 1").Scan(new(uint8))
	var ex *ch.Exception
	if !errors.As(err, &ex) || ex.Code != 48 || !strings.Contains(ex.Message, "compress") {
		t.Fatalf("LZ4: %v", err)
	}
}

func TestKillStreamingInsert(t *testing.T) {
	t.Run("after some rows", func(t *testing.T) { killStreamingInsert(t, 100) })
	// Cut before a byte of data: the engine must not see an empty, successful INSERT.
	t.Run("before any row", func(t *testing.T) { killStreamingInsert(t, 0) })
}

func killStreamingInsert(t *testing.T, lines int) {
	base, conn := chtest.Engine(t)
	ctx := testCtx(t)
	if err := conn.Exec(ctx, "CREATE TABLE t (a UInt64) ENGINE = MergeTree ORDER BY a"); err != nil {
		t.Fatal(err)
	}
	// A body that arrives slowly: some rows, then nothing until the KILL.
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() {
		for i := range lines {
			if _, err := io.WriteString(pw, `{"a":`+strings.Repeat("7", 1+i%3)+"}\n"); err != nil {
				return
			}
		}
	}()
	type result struct {
		a   answer
		err error
	}
	done := make(chan result, 1)
	go func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost,
			base+"/?"+url.Values{"query": {"INSERT INTO t FORMAT JSONEachRow"}, "query_id": {"slow-insert"}}.Encode(), pr)
		if err != nil {
			done <- result{err: err}
			return
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- result{err: err}
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		done <- result{a: answer{res.StatusCode, res.Header, string(b)}}
	}()
	waitRunning(t, ctx, conn, "slow-insert")
	if err := conn.Exec(ctx, "KILL QUERY WHERE query_id = 'slow-insert' SYNC"); err != nil {
		t.Fatal(err)
	}
	// End the body: net/http's client waits for its body writer before it reports a failed
	// round trip, and that writer would otherwise wait on this pipe forever.
	pw.Close()
	r := <-done
	switch {
	case r.err != nil && (errors.Is(r.err, syscall.ECONNRESET) || errors.Is(r.err, syscall.EPIPE) || errors.Is(r.err, io.EOF) || errors.Is(r.err, io.ErrUnexpectedEOF)):
		// The engine ends the connection of a killed streaming insert; now and then the
		// cut reaches the client before the answer does.
		t.Logf("killed insert: connection ended before the answer: %v", r.err)
	case r.err != nil || r.a.status == 200 || r.a.header.Get("X-ClickHouse-Exception-Code") != "394":
		t.Fatalf("killed insert: %+v", r)
	}
	var n uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM t").Scan(&n); err != nil || n != 0 {
		t.Fatalf("count = %d, %v after a killed insert", n, err)
	}
}

// A result in a format with header lines carries them once, although chdb opens every
// chunk of a stream with them (300,000 rows come in several chunks).
func TestStreamedHeaderOnce(t *testing.T) {
	base, _ := chtest.Engine(t)
	for format, header := range map[string]int{"JSONCompactEachRowWithNamesAndTypes": 2, "JSONCompactEachRowWithNames": 1} {
		a := post(t, base, url.Values{"default_format": {format}}, strings.NewReader("SELECT number AS n, toString(number) AS s FROM numbers(300000)"), nil)
		if a.status != 200 {
			t.Fatalf("%s: status %d", format, a.status)
		}
		lines := strings.Split(strings.TrimSuffix(a.body, "\n"), "\n")
		if len(lines) != header+300000 || lines[0] != `["n", "s"]` {
			t.Fatalf("%s: %d lines, first %q", format, len(lines), lines[0])
		}
		for i, l := range lines[header:] {
			if want := fmt.Sprintf(`[%d, "%d"]`, i, i); l != want {
				t.Fatalf("%s: row %d = %q, want %q", format, i, l, want)
			}
		}
	}
}
