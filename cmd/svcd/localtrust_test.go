package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/kafka/kafkatest"
	"github.com/svc-data/svc/infra/testenv"
	"github.com/svc-data/svc/pipeline"
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
	testenv.KafkaLibs(t)
	testenv.TemporalBin(t)
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
	testenv.Eventually(t, 2*time.Minute, func() (bool, string) {
		kids := children(s.PID())
		found := 0
		for _, w := range want {
			for _, cmd := range kids {
				if strings.Contains(cmd, w) {
					found++
					break
				}
			}
		}
		return found == len(want), fmt.Sprintf("svcd's children %v lack one of %v", kids, want)
	})
	// Their children too: the Temporal server runs below its forwarder.
	for _, pid := range descendants(s.PID())[1:] {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		cmd := string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if errors.Is(err, os.ErrNotExist) {
			continue // exited meanwhile
		}
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

// TestForgedRecordHeadersDoNotCrossOrganizations: a record on organization evil's ingest
// topic whose headers are copied from a record of organization default's (as anyone who
// can write to the log could: issue 23) is dropped and counted by evil's consumer, not
// inserted into default's table. Both clusters share one engine, where default's
// database exists for evil's consumer to write to; the consumer used to resolve the
// table id in the headers across every cluster.
func TestForgedRecordHeadersDoNotCrossOrganizations(t *testing.T) {
	conn := kafkatest.Conn(t)
	eng := sharedEngine(t)
	s := svcdtest.Start(t, "SVC_CLICKHOUSE_URL="+eng.URL(), "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "victim", "sorting_key": "n"})
	s.Must(202, "POST", "/v1/tables/victim", `{"n":1}`)
	s.WaitCount("victim", 1, time.Minute)
	other := secondOrganization(t, s)
	clusterOf := func(auth ...string) uuid.UUID {
		var list struct{ Clusters []struct{ ID uuid.UUID } }
		s.Must(200, "GET", "/v1/clusters", nil, auth...).JSON(t, &list)
		if len(list.Clusters) != 1 {
			t.Fatalf("clusters of a key: %+v", list)
		}
		return list.Clusters[0].ID
	}
	victimCluster, evilCluster := clusterOf(), clusterOf("Authorization", other)
	// evil's own table: its cluster's topic and consumer are running once its row landed.
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "mine", "sorting_key": "n"}, "Authorization", other)
	s.Must(202, "POST", "/v1/tables/mine", `{"n":1}`, "Authorization", other)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The victim's record, read from its topic at offset 0.
	reader, err := conn.Client(kgo.ConsumeTopics(pipeline.IngestTopic(victimCluster)), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	fs := reader.PollFetches(ctx)
	reader.Close()
	if err := fs.Err(); err != nil || len(fs.Records()) == 0 {
		t.Fatalf("read the victim's topic: %v, %d records", err, len(fs.Records()))
	}
	var headers []kgo.RecordHeader
	for _, h := range fs.Records()[0].Headers {
		if h.Key != pipeline.HeaderIdem {
			headers = append(headers, h)
		}
	}
	// The forged record goes to evil's topic, with the victim's headers.
	writer, err := conn.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	res, err := writer.ProduceSync(ctx, &kgo.Record{Topic: pipeline.IngestTopic(evilCluster), Value: []byte("{\"n\":666}\n"), Headers: headers}).First()
	if err != nil {
		t.Fatal(err)
	}
	// Wait until evil's consumer committed past the forged record: it was handled.
	adm := kadm.NewClient(writer)
	for {
		offsets, err := adm.FetchOffsets(ctx, pipeline.ConsumerGroup(evilCluster))
		if err == nil {
			if o, ok := offsets.Lookup(res.Topic, res.Partition); ok && o.At > res.Offset {
				break
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("evil's consumer did not commit past offset %d of partition %d: %v\n%s", res.Offset, res.Partition, err, s.Logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := s.Count("victim"); n != 1 {
		t.Fatalf("the victim's table holds %d rows, want 1: a forged record landed in it", n)
	}
	if !strings.Contains(s.Logs(), "records whose headers name a table or database not of this cluster") {
		t.Fatalf("the dropped record was not reported:\n%s", s.Logs())
	}
}

// descendants returns pid and every process below it.
func descendants(pid int) []int {
	all := []int{pid}
	for i := 0; i < len(all); i++ {
		for kid := range children(all[i]) {
			all = append(all, kid)
		}
	}
	return all
}

// socketInodes returns the inodes of the sockets the processes hold open.
func socketInodes(pids []int) map[string]bool {
	out := map[string]bool{}
	for _, pid := range pids {
		fds, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/fd/*")
		for _, fd := range fds {
			link, err := os.Readlink(fd)
			if err == nil && strings.HasPrefix(link, "socket:[") {
				out[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
			}
		}
	}
	return out
}

// TestEmbeddedTemporalServesOnlyThroughItsSocket: the Temporal svcd embeds listens on no
// TCP port of the host's network namespace (issue 23: any local process could reach its
// loopback frontend and start or signal any organization's workflows); it is reached
// only through the unix socket in its 0700 data directory, and workflows still run.
func TestEmbeddedTemporalServesOnlyThroughItsSocket(t *testing.T) {
	svcdtest.Requirements(t)
	testenv.TemporalBin(t)
	s := svcdtest.Start(t, "SVC_TEMPORAL_ADDR=")
	wf := createWorkflow(t, s, map[string]any{"name": "through the socket", "interval_seconds": nil,
		"query": map[string]any{"database": "default", "sql": "SELECT 1 AS one"}})
	run := startRun(t, s, wf.ID, "Idempotency-Key", "socket")
	waitRun(t, s, wf.ID, run.ID, "completed")

	dir := filepath.Join(s.DataDir, "temporal")
	pid, err := strconv.Atoi(strings.TrimSpace(temporalPID(t, s)))
	if err != nil {
		t.Fatal(err)
	}
	tree := descendants(pid)
	var server bool
	for _, p := range tree {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
		server = server || bytes.Contains(cmdline, []byte("start-dev"))
	}
	if !server {
		t.Fatalf("no Temporal server at or below the recorded process %d: %v", pid, tree)
	}
	// This test runs in the host's network namespace: /proc/self/net lists its sockets.
	inodes := socketInodes(tree)
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		raw, err := os.ReadFile(table)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" { // LISTEN
				continue
			}
			if inodes[f[9]] {
				t.Errorf("the embedded Temporal listens on %s in the host's network namespace (%s)", f[1], table)
			}
		}
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("%s has mode %v, want 0700", dir, fi.Mode().Perm())
	}
	fi, err = os.Stat(filepath.Join(dir, "frontend.sock"))
	if err != nil {
		t.Fatalf("no frontend socket: %v", err)
	}
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("frontend.sock: mode %v, want a socket with 0600", fi.Mode())
	}
	if strings.Contains(s.Logs(), "REACHABLE BY EVERY LOCAL PROCESS") {
		t.Error("svcd fell back to TCP loopback")
	}
}
