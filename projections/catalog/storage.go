package catalog

import (
	"fmt"
	"net/netip"
	"strings"
)

// Customer storage locations: the one home of what a bucket name and a path inside it may
// be, and of when two locations overlap. Tenant text names a bucket and a key prefix and
// nothing else: never a host, a port, a query or a way out of the prefix, because the
// engine's disk endpoint is built from the operator's endpoint with these as its path.

// ValidateBucket checks name against S3's bucket naming rules: 3 to 63 characters of
// lowercase letters, digits, dots and hyphens, starting and ending with a letter or
// digit, no two adjacent dots, and not shaped like an IP address. Anything else (a host,
// a port, a path, a query) is refused rather than cleaned.
func ValidateBucket(name string) error {
	if len(name) < 3 || len(name) > 63 {
		return fmt.Errorf("a bucket name has 3 to 63 characters, not %d", len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return fmt.Errorf("a bucket name has lowercase letters, digits, dots and hyphens only (S3's naming rules), not %q", c)
		}
	}
	if !alnum(name[0]) || !alnum(name[len(name)-1]) {
		return fmt.Errorf("a bucket name starts and ends with a letter or digit")
	}
	if strings.Contains(name, "..") || strings.Contains(name, ".-") || strings.Contains(name, "-.") {
		return fmt.Errorf("a bucket name has no two adjacent dots and no dot beside a hyphen")
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return fmt.Errorf("a bucket name is not shaped like an IP address")
	}
	return nil
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// maxPath bounds a location's path (S3 keys have 1,024 bytes; the engine adds its own).
const maxPath = 512

// CleanPath validates a path inside a bucket and returns it normalized: segments
// separated by single slashes, no leading or trailing slash ("" is the bucket's root).
// A segment is letters, digits and `-_.=`; `.` and `..` segments, percent signs,
// queries, fragments, backslashes and control characters are refused, so the path can
// neither leave its prefix nor change the meaning of the URL it becomes part of.
func CleanPath(p string) (string, error) {
	if len(p) > maxPath {
		return "", fmt.Errorf("a path has at most %d characters", maxPath)
	}
	var segs []string
	for s := range strings.SplitSeq(p, "/") {
		switch s {
		case "":
			continue
		case ".", "..":
			return "", fmt.Errorf("a path has no %q segment", s)
		}
		for i := 0; i < len(s); i++ {
			c := s[i]
			if !(alnum(c) || c >= 'A' && c <= 'Z' || c == '-' || c == '_' || c == '.' || c == '=') {
				return "", fmt.Errorf("a path has letters, digits, slashes and -_.= only, not %q", c)
			}
		}
		segs = append(segs, s)
	}
	return strings.Join(segs, "/"), nil
}

// Validate checks both locations of s (bucket names and paths) and normalizes their
// paths in place; the error names the field, e.g. s3_storage.data.bucket.
func (s *S3Storage) Validate() error {
	for _, l := range []struct {
		name string
		loc  *S3Location
	}{{"data", &s.Data}, {"backups", &s.Backups}} {
		if err := ValidateBucket(l.loc.Bucket); err != nil {
			return &FieldError{Field: "s3_storage." + l.name + ".bucket", Message: "s3_storage." + l.name + ".bucket: " + err.Error()}
		}
		p, err := CleanPath(l.loc.Path)
		if err != nil {
			return &FieldError{Field: "s3_storage." + l.name + ".path", Message: "s3_storage." + l.name + ".path: " + err.Error()}
		}
		l.loc.Path = p
	}
	return nil
}

// Overlaps reports whether two locations share objects: the same bucket, and one path
// is the other or a prefix of it by whole segments ("" is the whole bucket).
func (l S3Location) Overlaps(o S3Location) bool {
	if l.Bucket != o.Bucket {
		return false
	}
	a, b := strings.Trim(l.Path, "/"), strings.Trim(o.Path, "/")
	if len(a) > len(b) {
		a, b = b, a
	}
	return a == "" || a == b || strings.HasPrefix(b, a+"/")
}

// StorageInUse returns a location of an existing cluster or database (of any
// organization) that overlaps one of s's: two owners on one bucket and path would write
// and delete each other's objects. ok is false when s is free.
func (m *Model) StorageInUse(s *S3Storage) (S3Location, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var taken []*S3Storage
	for _, c := range m.clusters {
		if c.S3 != nil {
			taken = append(taken, c.S3)
		}
	}
	for _, d := range m.databases {
		if d.S3 != nil {
			taken = append(taken, d.S3)
		}
	}
	for _, t := range taken {
		for _, have := range []S3Location{t.Data, t.Backups} {
			for _, want := range []S3Location{s.Data, s.Backups} {
				if want.Overlaps(have) {
					return have, true
				}
			}
		}
	}
	return S3Location{}, false
}

// StorageCheck is the outcome of one step of verify-s3-access.
type StorageCheck struct {
	Name    string `json:"name"`
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// StorageVerification is the outcome of verify-s3-access: Verified when every check
// passed; Message names the first failure (`<check>: <reason>`).
type StorageVerification struct {
	Verified bool           `json:"verified"`
	Message  string         `json:"message"`
	Checks   []StorageCheck `json:"checks"`
}
