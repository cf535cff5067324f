package pgserver

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ulikunitz/xz"
)

func txz(t *testing.T, entries ...tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	xw, err := xz.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(xw)
	for _, h := range entries {
		body := []byte("x")
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write(body)
		}
	}
	tw.Close()
	xw.Close()
	return buf.Bytes()
}

// TestUntarXZStaysInside: the downloaded archive unpacks only below its directory; an
// entry or a symlink that points out of it is refused.
func TestUntarXZStaysInside(t *testing.T) {
	ok := txz(t, tar.Header{Name: "bin/", Typeflag: tar.TypeDir, Mode: 0o755},
		tar.Header{Name: "bin/postgres", Typeflag: tar.TypeReg, Mode: 0o755},
		tar.Header{Name: "lib/libpq.so", Typeflag: tar.TypeSymlink, Linkname: "libpq.so.5"})
	dir := t.TempDir()
	if err := untarXZ(bytes.NewReader(ok), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bin", "postgres")); err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]tar.Header{
		"dot-dot file":     {Name: "../evil", Typeflag: tar.TypeReg, Mode: 0o644},
		"absolute file":    {Name: "/tmp/evil", Typeflag: tar.TypeReg, Mode: 0o644},
		"symlink outside":  {Name: "lib/x", Typeflag: tar.TypeSymlink, Linkname: "../../etc"},
		"absolute symlink": {Name: "lib/y", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
	} {
		if err := untarXZ(bytes.NewReader(txz(t, h)), t.TempDir()); err == nil {
			t.Errorf("%s: unpacked", name)
		}
	}
}
