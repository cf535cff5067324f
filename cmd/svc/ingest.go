package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-data/svc/edge/client"
)

func init() { register(ingestCommand) }

type ingestOptions struct {
	table, transform, fromURL, format string
	chunkRows, chunkBytes, parallel   int
}

func ingestCommand(a *app) *cobra.Command {
	var o ingestOptions
	cmd := &cobra.Command{
		Use:   "ingest TABLE [FILE...]",
		Short: "Load NDJSON, JSON arrays, CSV or TSV files (optionally .gz) into a table",
		Long: `Sends the rows in chunks, each with an Idempotency-Key derived from the chunk's
position and content: running the same command again after a failure or a kill
stores every row exactly once (keep the same --chunk-rows). CSV and TSV need a
header line; their values are loaded as strings. FILE - (or none) reads stdin.
With --transform each file is sent whole in the transform's format. --from-url
makes the service import a URL instead (the service's address is --url).
On a terminal a progress bar is drawn on stderr; with --json, NDJSON progress
events go to stderr instead.`,
		Args: args(1, -1),
		RunE: runE(func(ctx context.Context, arg []string) error {
			o.table = arg[0]
			files := arg[1:]
			if o.fromURL != "" {
				if len(files) > 0 || o.transform != "" {
					return usageErr("--from-url takes no files and no --transform")
				}
				return a.emit(a.call(ctx, scopeDatabase, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.InsertRowsWithBody(ctx, o.table, &client.InsertRowsParams{Url: &o.fromURL}, "application/json", nil)
				}))
			}
			if len(files) == 0 {
				files = []string{"-"}
			}
			if o.chunkRows < 1 || o.parallel < 1 || o.chunkBytes < 1024 {
				return usageErr("--chunk-rows and --parallel must be positive, --chunk-bytes at least 1024")
			}
			switch o.format {
			case "", "ndjson", "json", "csv", "tsv":
			default:
				return usageErr("--format must be ndjson, json, csv or tsv")
			}
			return a.emit(a.ingest(ctx, o, files))
		}),
	}
	f := cmd.Flags()
	f.StringVar(&o.transform, "transform", "", "a source format the service transforms (see the API's ?transform=)")
	f.StringVar(&o.fromURL, "from-url", "", "import this URL on the service instead of sending files")
	f.StringVar(&o.format, "format", "", "input format: ndjson, json, csv or tsv (default: from the file name)")
	f.IntVar(&o.chunkRows, "chunk-rows", 20000, "rows per request (a rerun must use the same value)")
	f.IntVar(&o.chunkBytes, "chunk-bytes", 16<<20, "bytes per request at most (a rerun must use the same value)")
	f.IntVar(&o.parallel, "parallel", 4, "requests in flight")
	return cmd
}

// chunk is one request: rows as a JSON array, its position in the input, and how many input
// bytes it covers (for progress).
type chunk struct {
	seq     int
	body    []byte
	rows    int
	inBytes int64
}

type progress struct {
	rows, bytes, chunks, quarantined atomic.Int64
	total                            int64 // input bytes, 0 when unknown (stdin)
	start                            time.Time
}

func (a *app) ingest(ctx context.Context, o ingestOptions, files []string) (any, error) {
	if err := a.resolve(ctx, scopeDatabase); err != nil {
		return nil, err
	}
	c, err := a.client(scopeDatabase)
	if err != nil {
		return nil, err
	}
	p := &progress{start: time.Now()}
	for _, f := range files {
		if f != "-" {
			st, err := os.Stat(f)
			if err != nil {
				return nil, err
			}
			p.total += st.Size()
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	chunks := make(chan chunk, o.parallel)
	var wg sync.WaitGroup
	for range o.parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ch := range chunks {
				n, quarantined, err := a.sendChunk(ctx, c, o, ch)
				if err != nil {
					cancel(err)
					return
				}
				p.rows.Add(n)
				p.quarantined.Add(quarantined)
				p.bytes.Add(ch.inBytes)
				p.chunks.Add(1)
			}
		}()
	}
	stopProgress := a.showProgress(p)
	readErr := a.readChunks(ctx, o, files, chunks)
	close(chunks)
	wg.Wait()
	stopProgress()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return nil, err
	}
	if readErr != nil {
		return nil, readErr
	}
	el := time.Since(p.start).Seconds()
	return map[string]any{"table": o.table, "rows": p.rows.Load(), "quarantined_rows": p.quarantined.Load(),
		"chunks": p.chunks.Load(), "bytes": p.bytes.Load(),
		"elapsed_seconds": el, "rows_per_second": float64(p.rows.Load()) / el}, nil
}

// sendChunk posts one chunk, retrying with the same key while the service is busy or
// unreachable: the key makes a retry of a stored chunk store nothing more. It returns the
// rows the service acknowledged and quarantined (a transform's rows are counted there).
func (a *app) sendChunk(ctx context.Context, c *client.Client, o ingestOptions, ch chunk) (int64, int64, error) {
	sum := sha256.New()
	fmt.Fprintf(sum, "%s\x00%s\x00%d\x00", o.table, o.transform, ch.seq)
	sum.Write(ch.body)
	key := "svc-" + hex.EncodeToString(sum.Sum(nil))[:48]
	params := &client.InsertRowsParams{IdempotencyKey: &key}
	contentType := "application/json"
	if o.transform != "" {
		params.Transform = ptr(client.InsertRowsParamsTransform(o.transform))
		contentType = "application/octet-stream"
		if bytes.HasPrefix(ch.body, []byte{0x1f, 0x8b}) {
			params.ContentEncoding = ptr(client.InsertRowsParamsContentEncoding("gzip"))
		}
	}
	backoff := 200 * time.Millisecond
	for attempt := 1; ; attempt++ {
		resp, err := c.InsertRowsWithBody(ctx, o.table, params, contentType, bytes.NewReader(ch.body))
		var wait time.Duration
		if err == nil {
			if resp.StatusCode < 300 {
				var ack struct {
					Rows        *int64 `json:"successful_rows"`
					Quarantined int64  `json:"quarantined_rows"`
				}
				_ = readJSON(resp, &ack)
				if h, e := strconv.ParseInt(resp.Header.Get("X-Successful-Rows"), 10, 64); e == nil {
					ack.Rows = &h
				}
				if ack.Rows == nil {
					ack.Rows = ptr(int64(ch.rows))
				}
				return *ack.Rows, ack.Quarantined, nil
			}
			_, err = decodeAnswer(resp)
			if resp.StatusCode != 429 && resp.StatusCode < 500 {
				if ae, ok := err.(*apiError); ok {
					ae.body["chunk"] = ch.seq
				}
				return 0, 0, err
			}
			if s, e := strconv.Atoi(resp.Header.Get("Retry-After")); e == nil {
				wait = time.Duration(s) * time.Second
			}
		}
		if ctx.Err() != nil {
			return 0, 0, context.Cause(ctx)
		}
		if attempt == 12 {
			return 0, 0, fmt.Errorf("chunk %d not stored after %d attempts: %w", ch.seq, attempt, err)
		}
		if wait == 0 {
			wait = backoff
			backoff = min(backoff*2, 5*time.Second)
		}
		select {
		case <-ctx.Done():
			return 0, 0, context.Cause(ctx)
		case <-time.After(wait):
		}
	}
}

// countingReader counts the bytes read from the file (before decompression).
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

// readChunks reads the files in order and sends their rows in chunks.
func (a *app) readChunks(ctx context.Context, o ingestOptions, files []string, out chan<- chunk) error {
	seq := 0
	var cur chunk
	var lastIn int64
	var cr *countingReader
	flush := func() bool {
		if cur.rows == 0 {
			return true
		}
		if o.transform == "" {
			cur.body = append(cur.body, ']')
		}
		cur.seq, cur.inBytes = seq, cr.n-lastIn
		lastIn = cr.n
		seq++
		select {
		case out <- cur:
		case <-ctx.Done():
			return false
		}
		cur = chunk{body: make([]byte, 0, len(cur.body))}
		return true
	}
	for _, name := range files {
		var f io.ReadCloser = os.Stdin
		if name != "-" {
			var err error
			if f, err = os.Open(name); err != nil {
				return err
			}
		} else if rc, ok := a.stdin.(io.ReadCloser); ok {
			f = rc
		}
		cr, lastIn = &countingReader{r: f}, 0
		if o.transform != "" {
			b, err := io.ReadAll(cr)
			f.Close()
			if err != nil {
				return err
			}
			cur = chunk{body: b, rows: 1}
			if !flush() {
				return nil
			}
			continue
		}
		br := bufio.NewReaderSize(cr, 1<<20)
		var r io.Reader = br
		if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
			gz, err := gzip.NewReader(br)
			if err != nil {
				f.Close()
				return fmt.Errorf("%s: %w", name, err)
			}
			r = gz
		}
		rb := bufio.NewReaderSize(r, 1<<20)
		format := o.format
		if format == "" {
			format = formatOf(name, rb)
		}
		err := eachRow(rb, format, func(row []byte) bool {
			// The insert endpoint takes a JSON array of objects.
			if cur.rows == 0 {
				cur.body = append(cur.body[:0], '[')
			} else {
				cur.body = append(cur.body, ',', '\n')
			}
			cur.body = append(cur.body, row...)
			cur.rows++
			if cur.rows >= o.chunkRows || len(cur.body) >= o.chunkBytes {
				return flush()
			}
			return true
		})
		if err == nil && !flush() {
			err = context.Cause(ctx)
		}
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// formatOf names the input format from the file name, else from its first byte.
func formatOf(name string, r *bufio.Reader) string {
	base := strings.TrimSuffix(strings.ToLower(filepath.Base(name)), ".gz")
	switch filepath.Ext(base) {
	case ".csv":
		return "csv"
	case ".tsv", ".tab":
		return "tsv"
	case ".ndjson", ".jsonl":
		return "ndjson"
	}
	for i := 1; ; i++ {
		b, err := r.Peek(i)
		if err != nil || len(b) < i {
			return "ndjson"
		}
		switch b[i-1] {
		case ' ', '\t', '\r', '\n':
			continue
		case '[':
			return "json"
		}
		return "ndjson"
	}
}

// eachRow calls row with every row of the input as one line of JSON, until it returns false.
func eachRow(r *bufio.Reader, format string, row func([]byte) bool) error {
	switch format {
	case "json":
		dec := json.NewDecoder(r)
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return fmt.Errorf("a JSON input must be an array of objects")
		}
		var buf bytes.Buffer
		for dec.More() {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return err
			}
			buf.Reset()
			if err := json.Compact(&buf, raw); err != nil {
				return err
			}
			if !row(buf.Bytes()) {
				return nil
			}
		}
		return nil
	case "csv", "tsv":
		cr := csv.NewReader(r)
		if format == "tsv" {
			cr.Comma, cr.LazyQuotes = '\t', true
		}
		cr.ReuseRecord = true
		header, err := cr.Read()
		if err != nil {
			return fmt.Errorf("reading the header line: %w", err)
		}
		keys := make([][]byte, len(header))
		for i, h := range header {
			keys[i], _ = json.Marshal(h)
		}
		var buf []byte
		for {
			rec, err := cr.Read()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			buf = append(buf[:0], '{')
			for i, v := range rec {
				if i >= len(keys) {
					break
				}
				if i > 0 {
					buf = append(buf, ',')
				}
				buf = append(buf, keys[i]...)
				buf = append(buf, ':')
				vb, _ := json.Marshal(v)
				buf = append(buf, vb...)
			}
			buf = append(buf, '}')
			if !row(buf) {
				return nil
			}
		}
	}
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if !row(t) {
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// showProgress draws a bar on a terminal's stderr, or writes NDJSON progress events
// on stderr with --json; it returns the function that stops it (after a last report).
func (a *app) showProgress(p *progress) func() {
	bar := !a.json && isTerminal(a.stderr)
	if !bar && !a.json {
		return func() {}
	}
	report := func(final bool) {
		rows, in := p.rows.Load(), p.bytes.Load()
		el := time.Since(p.start).Seconds()
		if a.json {
			ev := map[string]any{"event": "progress", "rows": rows, "bytes": in, "elapsed_seconds": el}
			if p.total > 0 {
				ev["total_bytes"] = p.total
			}
			if final {
				ev["event"] = "done"
			}
			a.printEvent(ev)
			return
		}
		pct := 0.0
		if p.total > 0 {
			pct = float64(in) / float64(p.total)
		}
		const width = 30
		n := int(pct * width)
		fmt.Fprintf(a.stderr, "\r[%s%s] %3.0f%% %d rows %.0f rows/s ", strings.Repeat("=", n), strings.Repeat(" ", width-n),
			pct*100, rows, float64(rows)/max(el, 0.001))
		if final {
			fmt.Fprintln(a.stderr)
		}
	}
	every := 200 * time.Millisecond
	if a.json {
		every = 250 * time.Millisecond
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				report(true)
				return
			case <-t.C:
				report(false)
			}
		}
	}()
	return func() { close(stop); <-done }
}
