package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// TestBenchHEC (SVC_BENCH_HEC=<events>) is a measurement, not a check: web-log events
// through HEC in requests of 5,000 events, 4 concurrent, until all are searchable, with
// svcd's CPU time (and its engine's, when it runs as a child). With SVC_BENCH_HEC_PPROF=<dir>
// it writes a CPU profile of svcd over the sending.
func TestBenchHEC(t *testing.T) {
	events, _ := strconv.Atoi(os.Getenv("SVC_BENCH_HEC"))
	if events == 0 {
		t.Skip("a measurement: set SVC_BENCH_HEC=<events>")
	}
	const perRequest, workers = 5000, 4
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pprofAddr := l.Addr().String()
	l.Close()
	env := []string{"SVC_BOOTSTRAP_PASSWORD=" + adminPassword, "SVC_PPROF_ADDR=" + pprofAddr}
	if v := os.Getenv("SVC_BENCH_HEC_LINGER"); v != "" {
		env = append(env, "SVC_BATCH_LINGER="+v) // the tests' 50 ms makes small parts
	}
	s := svcdtest.Start(t, env...)
	installApp(t, s, "logsearch")
	s.Must(200, "POST", "/services/collector/event", `{"time": 1700000000, "event": "seed"}`, "Authorization", "Splunk "+s.AdminKey)
	now := time.Now().Unix()
	var bodies [][]byte
	for from := 0; from < events; from += perRequest {
		bodies = append(bodies, hecBody(now, from, min(perRequest, events-from)))
	}
	cpu := func() float64 { return processTreeCPU(s.PID(), nil) }
	byProc := map[string]float64{}
	processTreeCPU(s.PID(), byProc)
	for k, v := range byProc {
		byProc[k] = -v
	}
	profDone := make(chan struct{})
	if dir := os.Getenv("SVC_BENCH_HEC_PPROF"); dir != "" {
		go func() {
			defer close(profDone)
			r, err := http.Get("http://" + pprofAddr + "/debug/pprof/profile?seconds=8")
			if err != nil {
				t.Log(err)
				return
			}
			defer r.Body.Close()
			b, _ := io.ReadAll(r.Body)
			_ = os.WriteFile(filepath.Join(dir, "hec.pprof"), b, 0o644)
		}()
	} else {
		close(profDone)
	}
	c0, t0 := cpu(), time.Now()
	var wg sync.WaitGroup
	next := make(chan []byte)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				req, _ := http.NewRequest("POST", s.URL+"/services/collector/event", bytes.NewReader(b))
				req.Header.Set("Authorization", "Splunk "+s.AdminKey)
				r, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
				if r.StatusCode != 200 {
					t.Errorf("HEC answered %d", r.StatusCode)
				}
			}
		}()
	}
	for _, b := range bodies {
		next <- b
	}
	close(next)
	wg.Wait()
	acked := time.Since(t0)
	for {
		rows := s.Query("SELECT count() AS n FROM logsearch_events")
		if n, _ := rows[0]["n"].(float64); int(n) >= events+1 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	el, used := time.Since(t0), cpu()-c0
	processTreeCPU(s.PID(), byProc)
	<-profDone
	fmt.Printf("HEC: %d events in %d-event requests, %d concurrent: acked in %.2f s, searchable in %.2f s: %.0f events/s; svcd and children %.2f core-s (%.2f per million)\n",
		events, perRequest, workers, acked.Seconds(), el.Seconds(), float64(events)/el.Seconds(), used, used*1e6/float64(events))
	fmt.Printf("  core-s by process (pid, name): %v\n", byProc)
}

// hecBody is n HEC events from..from+n-1 of web-server access logs over the day before now:
// a raw access line as the event, host, source and sourcetype, and indexed fields.
func hecBody(now int64, from, n int) []byte {
	var b bytes.Buffer
	methods := []string{"GET", "GET", "GET", "POST", "PUT"}
	paths := []string{"users", "orders", "items", "cart", "search", "login", "health"}
	for i := from; i < from+n; i++ {
		status := []int{200, 200, 200, 200, 304, 404, 500, 503}[i%8]
		method, path := methods[i%5], fmt.Sprintf("/api/v1/%s/%d", paths[(i/5)%7], i%5000)
		ip := fmt.Sprintf("10.%d.%d.%d", i%200, (i/200)%250, i%250)
		ts := now - int64(i%86400)
		raw := fmt.Sprintf(`%s - - [%s] "%s %s HTTP/1.1" %d %d "-" "curl/8.5.0" %.1f`, ip, time.Unix(ts, 0).UTC().Format("02/Jan/2006:15:04:05 +0000"),
			method, path, status, i%50000, float64(i%1000)/10)
		ev, _ := json.Marshal(map[string]any{"time": float64(ts) + float64(i%1000)/1000, "host": fmt.Sprintf("web-%02d", i%12+1),
			"source": "/var/log/nginx/access.log", "sourcetype": "access_combined", "event": raw,
			"fields": map[string]any{"status": status, "method": method, "path": path, "bytes": i % 50000, "clientip": ip}})
		b.Write(ev)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// processTreeCPU is the user and system CPU seconds of pid and its live children, also
// added to by (keyed by pid and name) when given.
func processTreeCPU(pid int, by map[string]float64) float64 {
	total := 0.0
	stat := func(p string) {
		b, err := os.ReadFile(filepath.Join("/proc", p, "stat"))
		if err != nil {
			return
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		ppid, _ := strconv.Atoi(f[1])
		if p != strconv.Itoa(pid) && ppid != pid {
			return
		}
		u, _ := strconv.ParseFloat(f[11], 64)
		s, _ := strconv.ParseFloat(f[12], 64)
		total += (u + s) / 100 // clock ticks
		if by != nil {
			by[p+" "+string(b[bytes.IndexByte(b, '(')+1:bytes.LastIndexByte(b, ')')])] += (u + s) / 100
		}
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			stat(e.Name())
		}
	}
	return total
}
