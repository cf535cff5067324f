package main

import (
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// TestCLIRequestLogSource: the CLI names itself svc-cli/<version>, so the request log
// records its requests as source cli with the version "svc version" reports (issue 25,
// audit row 2: it sent a bare "svc-cli" and was logged as api).
func TestCLIRequestLogSource(t *testing.T) {
	s := svcdtest.Start(t)
	c := newCLI(t, s).with("SERVICE_API_KEY=" + s.AdminKey)
	v := c.ok("version")
	ver, _ := v["version"].(string)
	if ver == "" || v["user_agent"] != "svc-cli/"+ver {
		t.Fatalf("version: %v", v)
	}
	c.ok("org", "list")
	var page struct {
		Logs []struct {
			Route, Source string
			UserAgent     string `json:"user_agent"`
			ClientVersion string `json:"client_version"`
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		page.Logs = nil
		s.Must(200, "GET", "/v1/logs?sources=cli", nil).JSON(t, &page)
		if len(page.Logs) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	if len(page.Logs) != 1 || page.Logs[0].Route != "/v1/organizations" || page.Logs[0].Source != "cli" ||
		page.Logs[0].ClientVersion != ver || page.Logs[0].UserAgent != "svc-cli/"+ver {
		t.Fatalf("GET /v1/logs?sources=cli after svc org list: %+v", page.Logs)
	}
}
