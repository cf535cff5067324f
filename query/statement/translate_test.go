package statement

import "testing"

func TestTranslateError(t *testing.T) {
	env := Env{Catalog: fixtureCatalog()}
	f := func(in, want string) {
		t.Helper()
		if got := TranslateError(in, env); got != want {
			t.Errorf("TranslateError(%q)\n got %q\nwant %q", in, got, want)
		}
	}
	f("Code: 60. DB::Exception: Table o_0123456789abcdef0123456789abcdef__default.events__g3 does not exist. (UNKNOWN_TABLE)",
		"Code: 60. DB::Exception: Table default.events does not exist. (UNKNOWN_TABLE)")
	f("Code: 43. DB::Exception: Illegal type Dynamic of argument of function in: In scope SELECT count() FROM o_0123456789abcdef0123456789abcdef__default.events AS events WHERE doc.user.id IN (SELECT 1). (ILLEGAL_TYPE_OF_ARGUMENT)",
		"Code: 43. DB::Exception: Illegal type Dynamic of argument of function in: (ILLEGAL_TYPE_OF_ARGUMENT)")
	f("JOIN on keys with Dynamic type is not supported: key __table1.`doc.user.id` has type Dynamic",
		"JOIN on keys with Dynamic type is not supported: key __table1.`user.id` has type Dynamic")
	f("Unknown expression identifier `e.doc.x`", "Unknown expression identifier `e.x`")
	f("database o_fedcba9876543210fedcba9876543210__default and _svc.ingest_keys",
		"database <hidden> and <hidden>.ingest_keys")
	f("table analytics__g12 and t__gx and __g1", "table analytics and t__gx and __g1")
	f("document and docs.x and mydoc.y", "document and docs.x and mydoc.y")
	f("", "")
}

func TestNames(t *testing.T) {
	f := func(name string, engine, logical bool) {
		t.Helper()
		if got := isEngineDatabase(name); got != engine {
			t.Errorf("isEngineDatabase(%q) = %v", name, got)
		}
		if got := isLogicalName(name); got != logical {
			t.Errorf("isLogicalName(%q) = %v", name, got)
		}
	}
	f("o_0123456789abcdef0123456789abcdef__default", true, false)
	f("o_0123456789ABCDEF0123456789abcdef__default", false, false)
	f("o_0123456789abcdef0123456789abcdef__", false, false)
	f("o_0123456789abcdef0123456789abcde__default", false, false)
	f("_svc", false, true)
	f("default", false, true)
	f("events__g1", false, false)
	f("1events", false, false)
	f("a-b", false, false)
}
