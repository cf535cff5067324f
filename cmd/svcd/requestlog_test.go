package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/infra/testenv"
)

// TestRequestLogKeepsNoSecrets checks that GET /v1/logs shows a reader neither secret
// fields of request bodies nor another member's private saved search.
func TestRequestLogKeepsNoSecrets(t *testing.T) {
	// Storage credentials, so that a database on S3 is considered; it is refused (bucket
	// "b" is no S3 bucket name, so nothing is sent anywhere) and logged with its body.
	s := startControlPlane(t, "SVC_S3_ACCESS_KEY_ID=k", "SVC_S3_SECRET_ACCESS_KEY=never-shown")
	admin := "Bearer " + login(t, s, "admin", adminPassword)
	const arn, ext = "arn:aws:iam::123456789012:role/very-private", "ext-id-never-shown"
	s.Must(400, "POST", "/v1/databases", map[string]any{"name": "lake", "s3_storage": map[string]any{
		"data": map[string]string{"bucket": "b", "path": "d/"}, "backups": map[string]string{"bucket": "b", "path": "k/"},
		"role_arn": arn, "external_id": ext}})
	const name, spl = "my private search name", "private_marker_spl=1 | stats count"
	installApp(t, s, "logsearch")
	s.Must(201, "POST", "/v1/apps/logsearch/searches?organization=default&cluster=default", map[string]any{"name": name, "spl": spl},
		"Authorization", admin)
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "SELECT 1 AS kept_marker"})
	// The owner runs searches (as a saved private search is run: its text is posted), one
	// the language refuses with a message quoting it.
	s.Must(200, "POST", "/services/collector/event", `{"event": "one"}`, "Authorization", "Splunk "+s.AdminKey)
	s.Must(200, "POST", "/v1/spl/search", map[string]string{"spl": spl, "earliest": "0"}, "Authorization", admin)
	r := s.Must(400, "POST", "/v1/spl/search", map[string]string{"spl": "* | eval x=private_marker_fn(y)"}, "Authorization", admin)
	if !strings.Contains(string(r.Body), "private_marker_fn") {
		t.Fatalf("the author's own answer names the problem: %s", r.Body)
	}
	// A sink URL that does not parse, with a password where the port would be and a token:
	// the 400 names the field, not the URL.
	const sinkURL = "http://user:private_marker_pw/hook?token=private_marker_token"
	r = s.Must(400, "POST", "/v1/workflows?organization=default&cluster=default", map[string]any{"name": "w",
		"query": map[string]string{"database": "default", "sql": "SELECT 1"},
		"sinks": []any{map[string]any{"type": "http", "settings": map[string]any{"url": sinkURL}}}})
	if strings.Contains(string(r.Body), "private_marker") || !strings.Contains(string(r.Body), `"field":"sinks[0].settings.url"`) {
		t.Errorf("sink URL refusal: %s", r.Body)
	}
	reader, _ := createKey(t, s, map[string]any{"name": "reader", "permission": "read_only"})

	var page struct {
		Logs []struct {
			Route string
			Body  *string
			Error *struct{ Code, Message string }
		}
	}
	seen := func(route string) bool {
		for _, l := range page.Logs {
			if l.Route == route {
				return true
			}
		}
		return false
	}
	testenv.Eventually(t, 30*time.Second, func() (bool, string) {
		page.Logs = nil
		s.Must(200, "GET", "/v1/logs?limit=200", nil, "Authorization", "Bearer "+reader).JSON(t, &page)
		return seen("/v1/databases") && seen("/v1/apps/logsearch/searches") && seen("/v1/query") && seen("/v1/spl/search") && seen("/v1/workflows"),
			fmt.Sprintf("the log never showed every request: %+v", page.Logs)
	})
	kept := false
	for _, l := range page.Logs {
		if l.Error != nil && strings.Contains(l.Error.Message, "private_marker") {
			t.Errorf("the log of %s keeps the error %q", l.Route, l.Error.Message)
		}
		if l.Body == nil {
			continue
		}
		for _, secret := range []string{arn, ext, name, "private_marker"} {
			if strings.Contains(*l.Body, secret) {
				t.Errorf("the log of %s keeps %q: %s", l.Route, secret, *l.Body)
			}
		}
		kept = kept || strings.Contains(*l.Body, "kept_marker")
		if l.Route == "/v1/databases" && !strings.Contains(*l.Body, `"role_arn":"[redacted]"`) {
			t.Errorf("database body without the redacted field: %s", *l.Body)
		}
	}
	if !kept {
		t.Error("the query's body is not kept")
	}
}
