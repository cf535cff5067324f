package chclient_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/svc-data/svc/infra/clickhouse/chclient"
)

const logType = "JSON(_time DateTime64(3, 'UTC'), _raw String, host String, source String, sourcetype String, index String)"

// taken are documents the flattened encoder must type itself, each kind of value it takes
// at least once: numbers of every shape, booleans, nulls, nested objects, empty arrays,
// escapes, strings the engine might read as times (asked about), the timestamp shapes,
// a path with values of several types, a path given as a leaf and as an object.
var taken = []string{
	`{"n":0,"i":-12,"f":1.5,"e":1e5,"E":-1.25E-7,"z":-0,"fz":-0.0,"big":999999999999999999,"neg":-999999999999999999}`,
	`{"n":1,"b":true,"c":false,"x":null,"arr":[],"arr2":[ ],"user":{"id":1,"plan":"pro","geo":{"cc":"de"}}}`,
	`{"n":2,"s":"quote \" backslash \\ slash \/ tab \t nl \n unicode \u00e9 \ud83d\ude00 raw é 😀"}`,
	`{"n":3,"path":"/api/v1/items/12","ua":"Mozilla/5.0 (X11; Linux x86_64)","ip":"10.1.2.3","ver":"v2","num":"1.5","digits":"12345"}`,
	`{"n":4,"ts":"2026-11-21 05:01:02.123","t0":"2026-11-21 05:01:02","tz":"2026-11-21T05:01:02Z","tzf":"2024-02-29T23:59:59.123456789Z"}`,
	`{"n":5,"f":"now a string","i":2.5,"b":1,"user":{"id":"u-7"}}`,
	`{"n":6,"a":1}`,
	`{"n":7,"a":{"b":2},"a.c":3}`,
	"  {\"n\":8 , \"sp\" : [\t] ,\"k\":\t\"v\"}  ",
	`{"n":9,"_time":"2026-11-21 05:01:02.123","_raw":"line","host":"h","index":"main","status":503}`,
	`{"n":10,"_time":"2026-11-21 05:01:02","_raw":"line 2","source":"s","sourcetype":"st"}`,
	`{"n":21,"_time":"2026-11-21T05:01:02.5Z","_raw":"JSON lines' time"}`,
	`{"n":22,"_time":"2026-11-21T05:01:03Z"}`,
	`{"n":11}`,
	`{"n":12,"late":"x","later":"y"}`,
	`{"n":13,"late":"2026-11-21 05:01:02","later":"2026-11-21"}`, // String takes them: the path has one
	`{"n":14,"o":{"a":{}},"p":{},"q":{"r":1}}`,                   // empty objects hold no path
}

// refused are documents the encoder leaves to the engine as text, each for one reason.
var refused = map[string]string{
	"a path named twice":                  `{"n":0,"a":1,"a":2}`,
	"a path named twice, dotted":          `{"n":0,"a.b":1,"a":{"b":2}}`,
	"an integer past 18 digits":           `{"n":0,"a":1234567890123456789}`,
	"a float past Float64":                `{"n":0,"a":1e400}`,
	"a typed path not a string":           `{"n":0,"host":7}`,
	"a typed path's null":                 `{"n":0,"host":null}`,
	"a time of another shape":             `{"n":0,"_time":"2026-11-21T05:01:02+01:00"}`,
	"a time with more digits":             `{"n":0,"_time":"2026-11-21 05:01:02.1234"}`,
	"a path under a typed one":            `{"n":0,"host.x":"y"}`,
	"not an object":                       `[1]`,
	"text after the object":               `{"n":0} {"n":1}`,
	"a lone surrogate":                    `{"n":0,"s":"\ud83d"}`,
	"an empty key":                        `{"n":0,"":1}`,
	"a key with two dots in a row":        `{"n":0,"a..b":1}`,
	"a NUL escaped":                       `{"n":0,"s":"a\u0000b"}`,
	"a control byte":                      "{\"n\":0,\"s\":\"a\x01b\"}",
	"invalid JSON":                        `{"n":0,"a":tru}`,
	"a number with a leading 0":           `{"n":0,"a":01}`,
	"a date, which the engine types Date": `{"n":0,"d":"2026-11-21"}`,
	"a time the engine reads otherwise":   `{"n":0,"d":"2026-11-21 05:01:02 +0100"}`,
}

// TestJSONBlockMatchesTheEngine holds the flattened encoder to the engine's own JSON
// reader: the same documents inserted as the encoder's block and as JSONAsObject text
// read back the same, values and types, for a plain JSON column and one with typed paths,
// for fixed documents and for random ones; and documents it must not type itself it
// refuses, which then travel as text.
func TestJSONBlockMatchesTheEngine(t *testing.T) {
	c, ctx := engineWith(t, "CREATE DATABASE d")
	n := 0
	// compare inserts docs both ways and compares what the tables hold; false where the
	// encoder refused them (a failure if must).
	compare := func(t *testing.T, typ string, docs []string, must bool) bool {
		t.Helper()
		rows := []byte(strings.Join(docs, "\n") + "\n")
		if _, ok := c.JSONBlock(ctx, typ, rows); !ok {
			if must {
				t.Fatalf("the encoder refused documents it must take:\n%s", rows)
			}
			return false
		}
		n++
		bin, text := fmt.Sprintf("d.bin%d", n), fmt.Sprintf("d.text%d", n)
		for _, tb := range []string{bin, text} {
			if err := c.Exec(ctx, "CREATE TABLE "+tb+" (doc "+typ+") ENGINE = MergeTree ORDER BY tuple()"); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.InsertEncoded(ctx, "d", strings.TrimPrefix(bin, "d."), "tok", c.EncodeRows(ctx, typ, rows)); err != nil {
			t.Fatal("block:", err)
		}
		if err := c.Exec(ctx, "INSERT INTO "+text+" SETTINGS type_json_skip_duplicated_paths = 1 FORMAT JSONAsObject\n"+string(rows)); err != nil {
			t.Fatal("text:", err)
		}
		read := func(table string) []string {
			out, err := c.QueryStrings(ctx, "SELECT concat(toJSONString(doc), ' ', toString(JSONAllPathsWithTypes(doc))) FROM "+table+" ORDER BY doc.n.:Int64")
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		// The paths and types the encoding reports are those the engine lists.
		e := c.EncodeRows(ctx, typ, rows)
		lines, err := c.QueryStrings(ctx, "SELECT concat(p.1, ' ', arrayStringConcat(arraySort(p.2), ' ')) FROM (SELECT arrayJoin(distinctJSONPathsAndTypes(doc)) AS p FROM "+text+") ORDER BY 1")
		if err != nil {
			t.Fatal(err)
		}
		var reported []string
		for p, types := range e.Paths {
			reported = append(reported, p+" "+strings.Join(types, " "))
		}
		slices.Sort(reported)
		if fmt.Sprint(reported) != fmt.Sprint(lines) {
			t.Errorf("paths reported:\n %q\nthe engine's:\n %q", reported, lines)
		}
		got, want := read(bin), read(text)
		if len(got) != len(want) {
			t.Fatalf("%d rows from the block, %d from text", len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("row %d:\n block %s\n text  %s", i, got[i], want[i])
			}
		}
		return true
	}
	t.Run("fixed", func(t *testing.T) {
		compare(t, "JSON", taken, true)
		var typed []string
		for _, d := range taken {
			if !strings.Contains(d, `"i":2.5`) { // "i", "f", ... are dynamic in both types
				typed = append(typed, d)
			}
		}
		compare(t, logType, typed, true)
	})
	t.Run("refused", func(t *testing.T) {
		for why, doc := range refused {
			if _, ok := c.JSONBlock(ctx, logType, []byte(taken[0]+"\n"+doc+"\n")); ok {
				t.Errorf("%s: %s taken", why, doc)
			}
		}
		for _, typ := range []string{"JSON(max_dynamic_paths=8)", "JSON(a UInt8)", "JSON(a String) ", "Map(String, String)"} {
			if _, ok := c.JSONBlock(ctx, typ, []byte(taken[0]+"\n")); ok {
				t.Errorf("column type %s taken", typ)
			}
		}
	})
	t.Run("random", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 27))
		taken := 0
		const batches = 16
		for b := range batches {
			var docs []string
			frac := b%2 == 0
			for i := range 300 {
				docs = append(docs, randomDoc(r, i, frac))
			}
			for _, typ := range []string{"JSON", logType} {
				if compare(t, typ, docs, false) {
					taken++
				}
			}
		}
		// A batch is refused where a string falls on a path that has a time type and
		// is not a time itself (the engine's best-effort reading decides those).
		t.Logf("%d of %d random batches taken", taken, 2*batches)
		if taken < batches {
			t.Errorf("only %d of %d random batches taken", taken, 2*batches)
		}
	})
}

// randomDoc is a document numbered n of values the encoder takes, though not always
// together; its times have fractions if frac.
func randomDoc(r *rand.Rand, n int, frac bool) string {
	keys := []string{"a", "b", "c", "user", "geo", "status", "path", "t"}
	strs := []string{"GET", "/login", "/api/v1/items/7", "10.0.0.1", "Mozilla/5.0", "x1", "a b c", "é", "\\u00e9", "\\n", "1.5", "-3", "v1.2.3"}
	times := []string{"2026-01-02 03:04:05", "1999-12-31T23:59:59Z"}
	if frac {
		// A time without a fraction goes where the first with one went: DateTime64(9).
		times = []string{"2026-01-02 03:04:05.678", "1999-12-31T23:59:59.5Z", "2030-06-30 12:00:00.000000001", "2026-01-02 03:04:05"}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `{"n":%d`, n)
	if r.IntN(3) > 0 {
		fmt.Fprintf(&b, `,"_time":"2026-11-%02d %02d:%02d:%02d.%03d","host":"web-%d"`, 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000), r.IntN(12))
	}
	used := map[string]bool{}
	for range r.IntN(6) {
		k := keys[r.IntN(len(keys))]
		if used[k] {
			continue
		}
		used[k] = true
		fmt.Fprintf(&b, `,%q:`, k)
		if k == "t" { // a time, or a value of a type no time takes
			if r.IntN(4) > 0 {
				fmt.Fprintf(&b, `"%s"`, times[r.IntN(len(times))])
			} else {
				b.WriteString([]string{"7", "-2.5", "true", "null", "[]", `{"id":1}`}[r.IntN(6)])
			}
			continue
		}
		switch r.IntN(8) {
		case 0:
			fmt.Fprintf(&b, "%d", r.Int64N(2_000_000_000)-1_000_000_000)
		case 1:
			fmt.Fprintf(&b, "%g", (r.Float64()-0.5)*float64(r.IntN(1_000_000)))
		case 2:
			fmt.Fprintf(&b, `"%s"`, strs[r.IntN(len(strs))])
		case 3:
			b.WriteString([]string{"true", "false", "null"}[r.IntN(3)])
		case 4:
			// Arrays of one kind a key: an empty array is typed Array(Nullable(String))
			// where a path has no array yet, and one beside two array types is refused.
			// c's integers go where its floats went, if those came first.
			arrays := map[string][]string{"a": {`["a","b"]`, `["x"]`, "[]"}, "b": {"[1,2,3]", "[-7]"},
				"c": {"[0.5,2]", "[1.25]", "[3]"}, "user": {"[true]"}}
			choices := arrays[k]
			if choices == nil {
				choices = []string{"[]"}
			}
			b.WriteString(choices[r.IntN(len(choices))])
		case 5:
			fmt.Fprintf(&b, `{"id":%d,"name":"%s"}`, r.IntN(100), strs[r.IntN(len(strs))])
		case 6:
			fmt.Fprintf(&b, `{"deep":{"x":%.3f}}`, r.Float64())
		default:
			fmt.Fprintf(&b, `"%d-%02d"`, r.IntN(100), r.IntN(100))
		}
	}
	b.WriteByte('}')
	return b.String()
}

// TestProbeTellsRefusalsFromUnreachableEngines: the probe of the flattened
// serialization disables it only on the engine's own refusal (an engine that cannot read
// it), and probes again after an error reaching the engine.
func TestProbeTellsRefusalsFromUnreachableEngines(t *testing.T) {
	c, ctx := engineWith(t)
	_, err := c.QueryStrings(ctx, "SELECT * FROM format(Native, 'doc JSON', 'not a block')")
	if err == nil || !chclient.IsEngineException(err) {
		t.Fatalf("a statement the engine refuses: %v, want an engine exception", err)
	}
	down, err := chclient.Open(chclient.Config{URL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	if _, ok := down.JSONBlock(ctx, "JSON", []byte(`{"a":1}`+"\n")); ok {
		t.Fatal("rows encoded for an engine that was never reached")
	}
	_, err = down.QueryStrings(ctx, "SELECT 1")
	if err == nil || chclient.IsEngineException(err) {
		t.Fatalf("an engine that cannot be reached: %v, want an error that is no engine exception", err)
	}
}
