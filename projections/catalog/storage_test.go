package catalog_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/svc-data/svc/projections/catalog"
)

// TestStorageLocations: bucket names follow S3's rules and nothing else passes (the
// issue's bucket named a host, a port, a path and a query; `../victim-bucket` left the
// endpoint's path); paths are normalized and cannot leave their prefix; the field of a
// refusal is named.
func TestStorageLocations(t *testing.T) {
	bucket := func(name string, ok bool) {
		t.Helper()
		if err := catalog.ValidateBucket(name); (err == nil) != ok {
			t.Errorf("bucket %q: %v, want ok %v", name, err, ok)
		}
	}
	bucket("lake-0123", true)
	bucket("my.data.lake", true)
	bucket("abc", true)
	bucket(strings.Repeat("a", 63), true)
	bucket("probe-s3.test:19603/ssrf?", false)
	bucket("../victim-bucket", false)
	bucket("victim-bucket/..", false)
	bucket("127.0.0.1", false)
	bucket("ab", false)
	bucket(strings.Repeat("a", 64), false)
	bucket("Upper", false)
	bucket("-lead", false)
	bucket("trail.", false)
	bucket("a..b", false)
	bucket("a.-b", false)
	bucket("host@evil", false)
	bucket("sp ace", false)
	bucket("", false)

	path := func(in, want string) {
		t.Helper()
		got, err := catalog.CleanPath(in)
		if want == "!" {
			if err == nil {
				t.Errorf("path %q accepted as %q", in, got)
			}
			return
		}
		if err != nil || got != want {
			t.Errorf("path %q: %q %v, want %q", in, got, err, want)
		}
	}
	path("", "")
	path("/", "")
	path("lake/data", "lake/data")
	path("/lake//data/", "lake/data")
	path("dt=2026-11-27/part_1.x", "dt=2026-11-27/part_1.x")
	path("../victim", "!")
	path("lake/../../victim", "!")
	path("./lake", "!")
	path("lake?x=1", "!")
	path("lake#f", "!")
	path("lake%2f..", "!")
	path(`lake\..`, "!")
	path("lake\ndata", "!")
	path(strings.Repeat("a", 513), "!")

	s := catalog.S3Storage{Data: catalog.S3Location{Bucket: "lake-a", Path: "/x//y/"}, Backups: catalog.S3Location{Bucket: "probe-s3.test:19603/ssrf?"}}
	var fe *catalog.FieldError
	if err := s.Validate(); !errors.As(err, &fe) || fe.Field != "s3_storage.backups.bucket" || s.Data.Path != "x/y" {
		t.Fatalf("validate: %v (%+v), data path %q", err, fe, s.Data.Path)
	}
	s.Backups = catalog.S3Location{Bucket: "lake-a", Path: "../b"}
	if err := s.Validate(); !errors.As(err, &fe) || fe.Field != "s3_storage.backups.path" {
		t.Fatalf("validate: %v", err)
	}
}

// TestStorageOverlaps: locations overlap on the same bucket when one path is the other
// or its prefix by whole segments.
func TestStorageOverlaps(t *testing.T) {
	f := func(a, b catalog.S3Location, want bool) {
		t.Helper()
		if a.Overlaps(b) != want || b.Overlaps(a) != want {
			t.Errorf("%v and %v: want overlap %v", a, b, want)
		}
	}
	l := func(bucket, path string) catalog.S3Location { return catalog.S3Location{Bucket: bucket, Path: path} }
	f(l("b1", "lake"), l("b1", "lake"), true)
	f(l("b1", "lake"), l("b1", "lake/data"), true)
	f(l("b1", ""), l("b1", "anything"), true)
	f(l("b1", "lake"), l("b1", "lakehouse"), false)
	f(l("b1", "lake/data"), l("b1", "lake/backups"), false)
	f(l("b1", "lake"), l("b2", "lake"), false)
}
