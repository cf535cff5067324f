package requestlog

import (
	"strings"
	"testing"
)

func TestKeepBody(t *testing.T) {
	f := func(in, want string, kept bool) {
		t.Helper()
		got, ok := KeepBody([]byte(in))
		if ok != kept || got != want {
			t.Fatalf("KeepBody(%q) = %q %v, want %q %v", in, got, ok, want, kept)
		}
	}
	f(`{"name":"lake","s3_storage":{"data":{"bucket":"b"},"role_arn":"arn:aws:iam::1:role/x","external_id":"ext"}}`,
		`{"name":"lake","s3_storage":{"data":{"bucket":"b"},"external_id":"[redacted]","role_arn":"[redacted]"}}`, true)
	f(`{"username":"a","Password":"p","new_password":"q","items":[{"api_token":"t"},{"client_secret":{"x":1}}]}`,
		`{"Password":"[redacted]","items":[{"api_token":"[redacted]"},{"client_secret":"[redacted]"}],"new_password":"[redacted]","username":"a"}`, true)
	f(`{"sql":"SELECT 1","n":12345678901234567890}`, `{"n":12345678901234567890,"sql":"SELECT 1"}`, true)
	f(`{"role_arn":null}`, `{"role_arn":null}`, true)
	f(`not json`, ``, false)
	f(`{"a":1} {"b":2}`, ``, false)
	f(`{"a":1}x`, ``, false)
	f(`{"password":"p"`, ``, false)
	long, ok := KeepBody([]byte(`{"sql":"` + strings.Repeat("x", 3*MaxBody) + `"}`))
	if !ok || len(long) > MaxBody || !strings.HasPrefix(long, `{"sql":"xxx`) || !strings.HasSuffix(long, `…"}`) {
		t.Fatalf("long body kept as %d bytes: %.40q…", len(long), long)
	}
}
