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

// TestAlertApplyPruneAndDestinations: apply records its manager on the alerts it makes;
// --destinations sets every applied alert's destinations (secrets from the environment,
// compared by name and type, so a second apply changes nothing); --prune deletes the
// applied alerts the file no longer has, shown first by --dry-run, and never an alert
// made by hand.
func TestAlertApplyPruneAndDestinations(t *testing.T) {
	svcdtest.Requirements(t)
	testenv.Temporal(t)
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword, "SVC_URL_IMPORT_ALLOW=127.0.0.1")
	c := newCLI(t, s)
	c.saveLogin(t, config{Token: userToken(t, s), TokenType: tokenOAuth, Org: "default"})
	dir := t.TempDir()
	file, dfile := filepath.Join(dir, "rules.yml"), filepath.Join(dir, "destinations.yml")
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(file, promDocRules)
	write(dfile, "destinations:\n- name: team hook\n  type: webhook\n  url: ${HOOK_URL}\n  secret: ${HOOK_SECRET}\n- name: oncall\n  type: pagerduty\n  routing_key: ${PD_KEY}\n")
	const secret = "hook-secret-0123456789"
	c = c.with("HOOK_URL=http://127.0.0.1:9/hook", "HOOK_SECRET="+secret, "PD_KEY=pd-routing-key-1")
	// By hand, over the same database: apply never prunes it.
	s.Must(201, "POST", "/v1/alerts?organization=default&cluster=default", map[string]any{"name": "handmade", "query": map[string]any{"promql": "up == 0"}, "condition": map[string]any{"op": "any"}})

	c.ok("alert", "apply", "-f", file)
	a := c.ok("alert", "get", "instancedown")
	if field(a, "managed_by") != "svc alert apply" || len(field(a, "destinations").([]any)) != 0 {
		t.Fatalf("applied without --destinations: %v", a)
	}
	out := c.ok("alert", "apply", "-f", file, "--destinations", dfile)
	if got := changesOf(t, out); got["instancedown"] != "update" || got["highrequestlatency"] != "update" {
		t.Fatalf("destinations added: %v", out)
	}
	a = c.ok("alert", "get", "instancedown")
	ds := field(a, "destinations").([]any)
	if len(ds) != 2 || field(ds[0], "name") != "team hook" || field(ds[0], "secret_configured") != true || field(ds[1], "routing_key_configured") != true {
		t.Fatalf("destinations: %v", ds)
	}
	if strings.Contains(fmt.Sprint(out), secret) || strings.Contains(fmt.Sprint(a), secret) {
		t.Fatal("a destination secret was printed")
	}
	if got := changesOf(t, c.ok("alert", "apply", "-f", file, "--destinations", dfile)); got["instancedown"] != "unchanged" {
		t.Fatalf("second apply with the same destinations: %v", got)
	}
	if got := changesOf(t, c.ok("alert", "apply", "-f", file, "--destinations", dfile, "--refresh-destinations", "--dry-run")); got["instancedown"] != "update" {
		t.Fatalf("--refresh-destinations: %v", got)
	}
	// A variable the file names but the environment lacks is a usage error.
	unset := filepath.Join(dir, "unset.yml")
	write(unset, "destinations:\n- name: x\n  type: slack\n  url: ${SVC_TEST_NOT_SET_ANYWHERE}\n")
	if e := c.fails(2, "alert", "apply", "-f", file, "--destinations", unset); !strings.Contains(fmt.Sprint(e), "SVC_TEST_NOT_SET_ANYWHERE") {
		t.Fatalf("unset variable: %v", e)
	}

	// InstanceDown leaves the file.
	write(file, promDocRules[:strings.Index(promDocRules, "- name: instances")])
	out = c.ok("alert", "apply", "-f", file, "--prune", "--dry-run")
	if got := changesOf(t, out); got["instancedown"] != "delete" || got["handmade"] != "" || got["highrequestlatency"] != "unchanged" {
		t.Fatalf("prune dry run: %v", out)
	}
	c.ok("alert", "get", "instancedown")
	// Without --prune nothing is deleted; with it, only the applied alert.
	c.ok("alert", "apply", "-f", file)
	c.ok("alert", "get", "instancedown")
	c.ok("alert", "apply", "-f", file, "--prune")
	c.fails(1, "alert", "get", "instancedown")
	c.ok("alert", "get", "handmade")
	// Another manager's prune does not touch this one's alerts.
	empty := filepath.Join(dir, "empty.yml")
	write(empty, "groups: []\n")
	if got := changesOf(t, c.ok("alert", "apply", "-f", empty, "--managed-by", "team-b", "--prune")); len(got) != 0 {
		t.Fatalf("team-b pruned %v", got)
	}
	c.ok("alert", "get", "highrequestlatency")
}
