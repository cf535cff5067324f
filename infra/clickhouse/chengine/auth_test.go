package chengine

import (
	"net/http/httptest"
	"testing"
)

func TestAuthorized(t *testing.T) {
	f := func(password, user, pw, key string, want bool) {
		t.Helper()
		s := &Server{cfg: Config{Password: password}}
		r := httptest.NewRequest("POST", "/", nil)
		if user != "" {
			r.SetBasicAuth(user, pw)
		}
		if key != "" {
			r.Header.Set("X-ClickHouse-Key", key)
		}
		if got := s.authorized(r); got != want {
			t.Fatalf("password %q, basic %q:%q, key %q: authorized %v, want %v", password, user, pw, key, got, want)
		}
	}
	f("", "", "", "", true)
	f("secret", "", "", "", false)
	f("secret", "default", "secret", "", true)
	f("secret", "anyone", "secret", "", true)
	f("secret", "default", "guess", "", false)
	f("secret", "", "", "secret", true)
	f("secret", "", "", "secre", false)
	f("secret", "default", "guess", "secret", false) // basic auth, when sent, decides
}
