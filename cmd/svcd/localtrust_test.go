package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// children returns the command lines of pid's child processes by pid.
func children(pid int) map[int]string {
	out := map[int]string{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// The parent's pid is the second field after the command name, which is in
		// parentheses and may hold spaces.
		i := bytes.LastIndexByte(raw, ')')
		fields := strings.Fields(string(raw[i+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(pid) {
			continue
		}
		child, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(f), "cmdline"))
		out[child] = string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
	}
	return out
}

// TestChildProcessesGetNoSecrets: the engine, the embedded broker and the embedded
// Temporal server svcd starts get an allow-listed environment, never svcd's bootstrap
// key and password, service secret, secret key or storage credentials (issue 23: they
// were inherited, readable in /proc/<pid>/environ and by anything the children run).
func TestChildProcessesGetNoSecrets(t *testing.T) {
	svcdtest.Requirements(t)
	if os.Getenv("SVC_KAFKA_LIBS") == "" || os.Getenv("SVC_TEMPORAL_BIN") == "" {
		t.Skip("SVC_KAFKA_LIBS and SVC_TEMPORAL_BIN not set; run through `go tool task test`")
	}
	secrets := map[string]string{
		"SVC_BOOTSTRAP_PASSWORD":   "bootstrap-password-7f3a9c",
		"SVC_SERVICE_SECRET":       "service-secret-0123456789abcdef0123456789abcdef",
		"SVC_SECRET_KEY":           "secret-key-4d2e8b1a",
		"SVC_S3_SECRET_ACCESS_KEY": "s3-secret-9e7d6c5b",
	}
	env := []string{"SVC_KAFKA_SEEDS=", "SVC_TEMPORAL_ADDR="} // embedded broker and Temporal
	for k, v := range secrets {
		env = append(env, k+"="+v)
	}
	s := svcdtest.Start(t, env...)
	secrets["SVC_BOOTSTRAP_API_KEY"] = s.AdminKey
	want := []string{"chengine", "kafka.Kafka", "temporal"}
	var kids map[int]string
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		kids = children(s.PID())
		found := 0
		for _, w := range want {
			for _, cmd := range kids {
				if strings.Contains(cmd, w) {
					found++
					break
				}
			}
		}
		if found == len(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("svcd's children %v lack one of %v", kids, want)
		}
	}
	for pid, cmd := range kids {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			t.Fatalf("read the environment of %d (%s): %v", pid, cmd, err)
		}
		for name, value := range secrets {
			if bytes.Contains(raw, []byte(name+"=")) || bytes.Contains(raw, []byte(value)) {
				t.Errorf("child %d (%.60s) has %s in its environment", pid, cmd, name)
			}
		}
	}
}
