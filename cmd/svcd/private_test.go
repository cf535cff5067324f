package main

import (
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// TestEngineIsPrivate checks that a cluster's engine answers only svcd, which alone
// can compute its password, that the password is on no command line, and that svcd's
// data directory is private to its user.
func TestEngineIsPrivate(t *testing.T) {
	s := svcdtest.Start(t)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "t"})
	s.Must(202, "POST", "/v1/tables/t", `{"secret":"row"}`)
	s.WaitCount("t", 1, 60e9)
	addrs, _ := filepath.Glob(filepath.Join(s.DataDir, "clusters", "*", "engine", "chengine.addr"))
	if len(addrs) != 1 {
		t.Fatalf("engine address files: %v", addrs)
	}
	addr, err := os.ReadFile(addrs[0])
	if err != nil {
		t.Fatal(err)
	}
	cluster := uuid.MustParse(filepath.Base(filepath.Dir(filepath.Dir(addrs[0]))))
	ask := func(user, pw string) int {
		t.Helper()
		req, _ := http.NewRequest("POST", "http://"+strings.TrimSpace(string(addr))+"/", strings.NewReader("SELECT count() FROM system.tables"))
		if user != "" {
			req.SetBasicAuth(user, pw)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := ask("", ""); got != 403 {
		t.Errorf("engine without credentials: %d, want 403", got)
	}
	if got := ask("default", "guess"); got != 403 {
		t.Errorf("engine with a wrong password: %d, want 403", got)
	}
	filepath.WalkDir(s.DataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == s.DataDir || d.Name() == "svcd.log" { // svcd.log: the test harness's
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		if info.Mode().Perm()&0o077 != 0 && info.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s has mode %v; want it private to svcd's user", strings.TrimPrefix(path, s.DataDir), info.Mode().Perm())
		}
		return nil
	})
	secret, err := os.ReadFile(filepath.Join(s.DataDir, secretFile))
	if err != nil {
		t.Fatal(err)
	}
	password := enginePassword([]byte(strings.TrimSpace(string(secret))), cluster)
	if got := ask("default", password); got != 200 {
		t.Errorf("engine with svcd's password: %d, want 200", got)
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(enginePID(t, s.PID())) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cmdline), password) {
		t.Error("the engine's password is on its command line")
	}
}
