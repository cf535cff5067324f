package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/testenv"
)

// promDocRules is the alerting and recording rule examples of Prometheus's own
// documentation (docs/configuration/alerting_rules.md and recording_rules.md).
const promDocRules = `groups:
- name: example
  labels:
    team: myteam
  rules:
  - alert: HighRequestLatency
    expr: job:request_latency_seconds:mean5m{job="myjob"} > 0.5
    for: 10m
    keep_firing_for: 5m
    labels:
      severity: page
    annotations:
      summary: High request latency
  - record: code:prometheus_http_requests_total:sum
    expr: sum by (code) (prometheus_http_requests_total)
- name: instances
  rules:
  - alert: InstanceDown
    expr: up == 0
    for: 5m
    labels:
      severity: page
    annotations:
      summary: "Instance {{ $labels.instance }} down"
      description: "{{ $labels.instance }} of job {{ $labels.job }} has been down for more than 5 minutes."
`

func changesOf(t *testing.T, out map[string]any) map[string]string {
	t.Helper()
	got := map[string]string{}
	list, _ := out["changes"].([]any)
	for _, c := range list {
		got[fmt.Sprint(field(c, "name"))] = fmt.Sprint(field(c, "action"))
	}
	return got
}

// TestAlertApplyCLI: a rule file from Prometheus's documentation loads; --dry-run shows
// and changes nothing; apply is idempotent; a changed rule is an update with its diff.
func TestAlertApplyCLI(t *testing.T) {
	svcdtest.Requirements(t)
	testenv.Temporal(t)
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	c := newCLI(t, s)
	c.saveLogin(t, config{Token: userToken(t, s), TokenType: tokenOAuth, Org: "default"})
	file := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(file, []byte(promDocRules), 0o600); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"highrequestlatency": "create", "instancedown": "create", "code:prometheus_http_requests_total:sum": "skipped"}
	if got := changesOf(t, c.ok("alert", "apply", "-f", file, "--dry-run", "--database", "default")); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("dry run: %v", got)
	}
	if l := c.ok("alert", "list"); len(l["alerts"].([]any)) != 0 {
		t.Fatalf("the dry run created alerts: %v", l)
	}
	c.ok("alert", "apply", "-f", file, "--database", "default")
	a := c.ok("alert", "get", "InstanceDown")
	if field(a, "for_seconds") != float64(300) || field(field(a, "query"), "promql") != "up == 0" || field(field(a, "labels"), "severity") != "page" ||
		field(field(a, "condition"), "op") != "any" {
		t.Fatalf("instancedown: %v", a)
	}
	if h := c.ok("alert", "get", "highrequestlatency"); field(field(h, "labels"), "team") != "myteam" {
		t.Fatalf("group labels: %v", h)
	}
	again := changesOf(t, c.ok("alert", "apply", "-f", file, "--database", "default"))
	if again["highrequestlatency"] != "unchanged" || again["instancedown"] != "unchanged" {
		t.Fatalf("second apply: %v", again)
	}
	// InstanceDown's own "for" (after keep_firing_for's line).
	changed := strings.Replace(promDocRules, "\n    for: 5m\n", "\n    for: 15m\n", 1)
	if err := os.WriteFile(file, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	out := c.ok("alert", "apply", "-f", file, "--dry-run", "--database", "default")
	if got := changesOf(t, out); got["instancedown"] != "update" || got["highrequestlatency"] != "unchanged" {
		t.Fatalf("dry run of a change: %v", out)
	}
	c.ok("alert", "apply", "-f", file, "--database", "default")
	if a := c.ok("alert", "get", "instancedown"); field(a, "for_seconds") != float64(900) {
		t.Fatalf("after the update: %v", a)
	}
}
