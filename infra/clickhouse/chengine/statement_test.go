package chengine

import (
	"strings"
	"testing"
)

func TestAnalyzeInsert(t *testing.T) {
	f := func(text, wantQuery, wantFormat, wantData string) {
		t.Helper()
		st, err := analyze(text, true)
		if err != nil {
			t.Fatalf("analyze(%q): %v", text, err)
		}
		if st.Insert == nil {
			t.Fatalf("analyze(%q): no insert plan", text)
		}
		if got := st.Insert.Query("/f", "gzip"); got != wantQuery {
			t.Errorf("analyze(%q).Query:\n got %q\nwant %q", text, got, wantQuery)
		}
		if st.Insert.Format != wantFormat {
			t.Errorf("analyze(%q).Format = %q, want %q", text, st.Insert.Format, wantFormat)
		}
		if got := text[st.Insert.DataStart:]; got != wantData {
			t.Errorf("analyze(%q) data = %q, want %q", text, got, wantData)
		}
	}
	f("INSERT INTO t FORMAT Native\n\x0a\x01rest",
		"INSERT INTO t FROM INFILE '/f' COMPRESSION 'gzip' FORMAT Native", "Native", "\x0a\x01rest")
	f("INSERT INTO `db`.`t` (a, b) FORMAT JSONEachRow {\"a\":1}",
		"INSERT INTO `db`.`t` (a, b) FROM INFILE '/f' COMPRESSION 'gzip' FORMAT JSONEachRow", "JSONEachRow", "{\"a\":1}")
	f("INSERT INTO t SETTINGS insert_deduplication_token='x' FORMAT JSONAsObject\n{\"a\":1}\n\n{\"b\":2}\n",
		"INSERT INTO t FROM INFILE '/f' COMPRESSION 'gzip' SETTINGS insert_deduplication_token='x' FORMAT JSONAsObject",
		"JSONAsObject", "{\"a\":1}\n\n{\"b\":2}\n")
	f("insert into t values (1, 'a;b'), (2, 'c')",
		"insert into t FROM INFILE '/f' COMPRESSION 'gzip' FORMAT Values", "Values", "(1, 'a;b'), (2, 'c')")
	f("INSERT INTO t (a) SETTINGS async_insert=1, x = -1 VALUES (1)",
		"INSERT INTO t (a) FROM INFILE '/f' COMPRESSION 'gzip' SETTINGS async_insert=1, x = -1 FORMAT Values", "Values", "(1)")
	f("INSERT INTO t FORMAT CSV SETTINGS format_csv_delimiter = ';'\r\n1;2\n",
		"INSERT INTO t FROM INFILE '/f' COMPRESSION 'gzip' FORMAT CSV SETTINGS format_csv_delimiter = ';'", "CSV", "1;2\n")
	f("/* c */ INSERT INTO TABLE format FORMAT TSV  \t\n\n1\n",
		"/* c */ INSERT INTO TABLE format FROM INFILE '/f' COMPRESSION 'gzip' FORMAT TSV", "TSV", "\n1\n")
	f("INSERT INTO FUNCTION file('a.csv', 'CSV', 'x UInt8') FORMAT CSV\n1\n",
		"INSERT INTO FUNCTION file('a.csv', 'CSV', 'x UInt8') FROM INFILE '/f' COMPRESSION 'gzip' FORMAT CSV", "CSV", "1\n")
	f("INSERT INTO t FORMAT Native", "INSERT INTO t FROM INFILE '/f' COMPRESSION 'gzip' FORMAT Native", "Native", "")
}

func TestAnalyzeStatement(t *testing.T) {
	f := func(text, kind, format string) {
		t.Helper()
		st, err := analyze(text, true)
		if err != nil {
			t.Fatalf("analyze(%q): %v", text, err)
		}
		if st.Kind != kind || st.Format != format || st.Insert != nil {
			t.Errorf("analyze(%q) = kind %q format %q insert %v, want %q %q", text, st.Kind, st.Format, st.Insert != nil, kind, format)
		}
	}
	f("SELECT 1", "SELECT", "")
	f("select 1 format JSONEachRow", "SELECT", "JSONEachRow")
	f("SELECT format FROM t", "SELECT", "")
	f("SELECT 1 AS format", "SELECT", "")
	f("SELECT 1 FORMAT JSON SETTINGS max_threads = 1;", "SELECT", "JSON")
	f("SELECT '; FORMAT x' FROM t FORMAT CSV -- trailing", "SELECT", "CSV")
	f("(SELECT 1) UNION ALL (SELECT 2 FORMAT TSV)", "SELECT", "")
	f("  -- c\n/* a /* nested */ b */ WITH 1 AS x SELECT x", "WITH", "")
	f("SELECT $$a;b$$, $t$x$t$", "SELECT", "")
	f("INSERT INTO t SELECT * FROM s", "INSERT", "")
	f("CREATE TABLE t (a UInt8) ENGINE = Memory", "CREATE", "")
	f("SELECT 1;", "SELECT", "")
	f("SELECT 'it''s', 'a\\'b'", "SELECT", "")
}

func TestAnalyzeRefuses(t *testing.T) {
	f := func(text string, code int) {
		t.Helper()
		_, err := analyze(text, true)
		se, ok := err.(*errStatement)
		if !ok || se.code != code {
			t.Errorf("analyze(%q) = %v, want code %d", text, err, code)
		}
	}
	f("SELECT 1; SELECT 2", codeSyntaxError)
	f("SELECT 1; DROP TABLE t", codeSyntaxError)
	f("", codeSyntaxError)
	f("-- only a comment", codeSyntaxError)
	f("SELECT 1 INTO OUTFILE 'x'", codeNotImplemented)
	f("INSERT INTO t FROM INFILE '/etc/passwd' FORMAT CSV", codeNotImplemented)
	f("INSERT INTO t FORMAT CSV ;1,2", codeSyntaxError)
	f("INSERT INTO t SELECT * FROM input('a UInt8') FORMAT CSV", codeNotImplemented)
	f("KILL QUERY WHERE user = 'x'", codeNotImplemented)
}

func TestAnalyzeKill(t *testing.T) {
	f := func(text, id string, sync bool) {
		t.Helper()
		st, err := analyze(text, true)
		if err != nil {
			t.Fatalf("analyze(%q): %v", text, err)
		}
		if st.KillQueryID != id || st.KillSync != sync {
			t.Errorf("analyze(%q) = %q sync %v, want %q %v", text, st.KillQueryID, st.KillSync, id, sync)
		}
	}
	f("KILL QUERY WHERE query_id = 'abc'", "abc", false)
	f("kill query where query_id='a\\'b' SYNC", "a'b", true)
	f("KILL QUERY WHERE query_id = 'x' ASYNC FORMAT TSV;", "x", false)
}

func TestAnalyzeIncomplete(t *testing.T) {
	head := "INSERT INTO t FORMAT JSONEachRow\n" + strings.Repeat("{\"a\":1}\n", 10)
	st, err := analyze(head, false)
	if err != nil || st.Insert == nil {
		t.Fatalf("analyze(head) = %v, %v", st, err)
	}
	if _, err := analyze("SELECT "+strings.Repeat("1+", 100), false); err == nil {
		t.Fatal("an incomplete SELECT must be refused")
	}
}

func TestInsertDataBegins(t *testing.T) {
	f := func(head string, want bool) {
		t.Helper()
		if got := insertDataBegins(head); got != want {
			t.Errorf("insertDataBegins(%q) = %v, want %v", head, got, want)
		}
	}
	f("INSERT INTO t FORMAT JSONEachRow\n", true) // the URL query and its newline
	f("INSERT INTO t FORMAT JSONEachRow\n{", true)
	f("INSERT INTO t FORMAT JSONEachRo", false)
	f("INSERT INTO t FORMAT CSV  ", false)
	f("INSERT INTO t VALUES", false)
	f("INSERT INTO t VALUES (1", true)
	f("INSERT INTO t SELECT 1", false)
	f("SELECT 1", false)
	f("INSERT INTO t SETTINGS a = 1 FORM", false)
}

func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"INSERT INTO t FORMAT Native\n\x01", "SELECT 1 FORMAT JSON", "KILL QUERY WHERE query_id = 'x' SYNC",
		"INSERT INTO t (a) SETTINGS x=1 VALUES (1)", "/* /* */ */ SELECT $$x$$", "SELECT 'a\\'",
	} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, text string, complete bool) {
		st, err := analyze(text, complete)
		if err != nil {
			return
		}
		if st.Insert != nil && (st.Insert.DataStart < 0 || st.Insert.DataStart > len(text)) {
			t.Fatalf("data start %d out of range for %q", st.Insert.DataStart, text)
		}
	})
}

// A connection keeps the state of its prologue for the next request with the same one.
func TestPrologueKey(t *testing.T) {
	a := prologueKey("db", [][2]string{{"readonly", "2"}, {"max_threads", "1"}})
	for _, other := range []string{
		prologueKey("", [][2]string{{"readonly", "2"}, {"max_threads", "1"}}),
		prologueKey("db", [][2]string{{"readonly", "2"}}),
		prologueKey("db", [][2]string{{"readonly", "2"}, {"max_threads", "2"}}),
		prologueKey("db", [][2]string{{"readonly", "2\nmax_threads=1"}}),
		prologueKey("", nil),
	} {
		if other == a {
			t.Errorf("key %q shared by two prologues", a)
		}
	}
	if prologueKey("", nil) != "" || a != prologueKey("db", [][2]string{{"readonly", "2"}, {"max_threads", "1"}}) {
		t.Error("keys are not stable")
	}
}
