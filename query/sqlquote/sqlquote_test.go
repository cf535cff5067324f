package sqlquote

import "testing"

func TestQuote(t *testing.T) {
	f := func(in, wantString, wantIdent string) {
		t.Helper()
		if got := String(in); got != wantString {
			t.Errorf("String(%q) = %s, want %s", in, got, wantString)
		}
		if got := Ident(in); got != wantIdent {
			t.Errorf("Ident(%q) = %s, want %s", in, got, wantIdent)
		}
	}
	f("", `''`, "``")
	f("plain", `'plain'`, "`plain`")
	f("it's", `'it\'s'`, "`it's`")
	f("a`b", "'a`b'", "`a\\`b`")
	f(`back\slash`, `'back\\slash'`, "`back\\\\slash`")
	f("tab\tnl\ncr\rnul\x00", `'tab\tnl\ncr\rnul\0'`, "`tab\\tnl\\ncr\\rnul\\0`")
	f("bell\x07del\x7f", `'bell\x07del\x7f'`, "`bell\\x07del\\x7f`")
	f("ünï", `'ünï'`, "`ünï`")
}
