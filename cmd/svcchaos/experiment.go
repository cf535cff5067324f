package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Report is what a run measured.
type Report struct {
	Seed                  int64
	Dir                   string
	Saturation            float64 // acknowledged requests/s, closed loop
	Requests, Acked       int64   // requests started, and acknowledged
	AckedRows, StoredRows int64
	Lost, Duplicated      int64
	UnackedLanded         int64 // rows of requests never acknowledged that were stored anyway
	Restarts              map[string]int
	Recovery              []time.Duration
	OverloadAnswers       map[int]int64
	OverloadViolations    []string
	RequireShedding       bool // the overload must draw 429/503 answers
	RSSMaxMiB             float64
	RSSBoundMiB           int
	RecoverRate, Target   float64       // requests/s acknowledged after the overload, and the 70% target
	RecoverRatio          float64       // the share of Target that counts as recovered
	Drain                 time.Duration // from the overload's end until its backlog was stored
	BaselineRate          float64       // requests/s acknowledged at 70% before the overload
	Errors                []string
}

// Failures are the checks that did not hold.
func (r *Report) Failures() []string {
	var out []string
	if r.Lost != 0 {
		out = append(out, fmt.Sprintf("%d acknowledged rows lost", r.Lost))
	}
	if r.Duplicated != 0 {
		out = append(out, fmt.Sprintf("%d rows duplicated", r.Duplicated))
	}
	if r.AckedRows == 0 {
		out = append(out, "nothing was acknowledged")
	}
	if len(r.OverloadViolations) > 0 {
		out = append(out, fmt.Sprintf("%d answers under overload were neither 2xx nor 429/503 with Retry-After (first: %s)",
			len(r.OverloadViolations), r.OverloadViolations[0]))
	}
	if r.RequireShedding && r.OverloadAnswers[429]+r.OverloadAnswers[503] == 0 {
		out = append(out, fmt.Sprintf("the overload drew no 429/503: the edge was not overloaded (answers %v)", r.OverloadAnswers))
	}
	if r.RSSMaxMiB > float64(r.RSSBoundMiB) {
		out = append(out, fmt.Sprintf("svcd RSS reached %.0f MiB, over the %d MiB bound", r.RSSMaxMiB, r.RSSBoundMiB))
	}
	if r.BaselineRate > 0 && r.RecoverRate < r.RecoverRatio*r.BaselineRate {
		out = append(out, fmt.Sprintf("throughput after the overload %.1f req/s, under %.0f%% of the %.1f req/s acknowledged at the same load before it",
			r.RecoverRate, 100*r.RecoverRatio, r.BaselineRate))
	}
	return append(out, r.Errors...)
}

func (r *Report) print(w io.Writer) {
	pct := func(q float64) time.Duration {
		if len(r.Recovery) == 0 {
			return 0
		}
		s := slices.Clone(r.Recovery)
		slices.Sort(s)
		return s[min(len(s)-1, int(q*float64(len(s))))]
	}
	total := 0
	for _, n := range r.Restarts {
		total += n
	}
	fmt.Fprintf(w, "\nsvcchaos report (seed %d)\n", r.Seed)
	fmt.Fprintf(w, "  saturation            %.1f requests/s\n", r.Saturation)
	fmt.Fprintf(w, "  requests              %d sent, %d acknowledged\n", r.Requests, r.Acked)
	fmt.Fprintf(w, "  acknowledged rows     %d\n", r.AckedRows)
	fmt.Fprintf(w, "  stored rows           %d\n", r.StoredRows)
	fmt.Fprintf(w, "  lost                  %d\n", r.Lost)
	fmt.Fprintf(w, "  duplicated            %d\n", r.Duplicated)
	fmt.Fprintf(w, "  unacknowledged, stored %d (requests given up while in doubt)\n", r.UnackedLanded)
	fmt.Fprintf(w, "  restarts survived     %d (svcd %d, engine %d, broker %d)\n", total, r.Restarts["svcd"], r.Restarts["engine"], r.Restarts["broker"])
	fmt.Fprintf(w, "  recovery kill→queryable p50 %s, max %s\n", pct(0.5).Round(time.Millisecond), pct(1).Round(time.Millisecond))
	fmt.Fprintf(w, "  overload answers      %v (status: count; -1: not sent, 512 in flight)\n", r.OverloadAnswers)
	fmt.Fprintf(w, "  svcd RSS max          %.0f MiB (bound %d MiB)\n", r.RSSMaxMiB, r.RSSBoundMiB)
	fmt.Fprintf(w, "  after the overload    backlog stored in %s, then %.1f requests/s acknowledged of %.1f offered (before it: %.1f, ratio %.2f)\n",
		r.Drain.Round(time.Millisecond), r.RecoverRate, r.Target, r.BaselineRate, r.RecoverRate/max(r.BaselineRate, 1e-9))
	if f := r.Failures(); len(f) > 0 {
		fmt.Fprintf(w, "  FAILED: %s\n", strings.Join(f, "; "))
	} else {
		fmt.Fprintln(w, "  OK: lost = 0, duplicated = 0")
	}
}

// ledger keeps every request: how many rows it carries and whether it was acknowledged.
type ledger struct {
	next  atomic.Int64
	mu    sync.Mutex
	acked map[int64]bool
	sent  map[int64]bool
	rows  int
}

func (l *ledger) body(r int64) []byte {
	var b strings.Builder
	b.WriteByte('[')
	for i := range l.rows {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"r":%d,"i":%d,"pad":"chaos row %d of request %d"}`, r, i, i, r)
	}
	b.WriteByte(']')
	return []byte(b.String())
}

// send posts one new request and retries it with its Idempotency-Key until it is
// acknowledged or until gives up. It reports whether it was acknowledged.
func (l *ledger) send(ctx context.Context, s *stack, until time.Time, onAck func()) bool {
	r := l.next.Add(1)
	l.mu.Lock()
	l.sent[r] = true
	l.mu.Unlock()
	key := "chaos-" + strconv.FormatInt(r, 10)
	body := l.body(r)
	delay := 100 * time.Millisecond
	for ctx.Err() == nil {
		status, retryAfter, _, err := s.do(ctx, "POST", "/v1/tables/chaos", body, "Idempotency-Key", key)
		if err == nil && status/100 == 2 {
			l.mu.Lock()
			l.acked[r] = true
			l.mu.Unlock()
			if onAck != nil {
				onAck()
			}
			return true
		}
		if time.Now().After(until) {
			return false
		}
		wait := delay
		if n, e := strconv.Atoi(retryAfter); e == nil && n > 0 {
			wait = time.Duration(n) * time.Second
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		delay = min(2*delay, 2*time.Second)
	}
	return false
}

// load offers rate requests/s (0: closed loop with cfg.Workers) until stop, each
// retried until acknowledged or until giveUp. It returns how many were acknowledged.
func load(ctx context.Context, s *stack, l *ledger, workers int, rate float64, stop <-chan struct{}, giveUp func() time.Time) int64 {
	var acked atomic.Int64
	var wg sync.WaitGroup
	jobs := make(chan struct{}, workers)
	for range workers {
		wg.Go(func() {
			for range jobs {
				l.send(ctx, s, giveUp(), func() { acked.Add(1) })
			}
		})
	}
	if rate <= 0 {
	closed:
		for {
			select {
			case <-stop:
				break closed
			case <-ctx.Done():
				break closed
			case jobs <- struct{}{}:
			}
		}
	} else {
		// Requests are released every 10 ms by the clock, not per tick, so a busy
		// machine that delays ticks does not lower the offered rate.
		tick := time.NewTicker(10 * time.Millisecond)
		begin, released := time.Now(), 0
	open:
		for {
			select {
			case <-stop:
				break open
			case <-ctx.Done():
				break open
			case <-tick.C:
				for due := int(rate * time.Since(begin).Seconds()); released < due; released++ {
					select {
					case jobs <- struct{}{}:
					default: // every worker is busy or retrying: the offered load waits, bounded
					}
				}
			}
		}
		tick.Stop()
	}
	close(jobs)
	wg.Wait()
	return acked.Load()
}

func after(d time.Duration) <-chan struct{} {
	c := make(chan struct{})
	time.AfterFunc(d, func() { close(c) })
	return c
}

func experiment(ctx context.Context, cfg Config, s *stack, rep *Report, out io.Writer) error {
	rep.Restarts = map[string]int{}
	rep.OverloadAnswers = map[int]int64{}
	for _, name := range []string{"chaos", "chaos_probe"} {
		body := fmt.Appendf(nil, `{"name":%q}`, name)
		if status, _, raw, err := s.do(ctx, "POST", "/v1/tables", body); err != nil || status != 200 {
			return fmt.Errorf("create table %s: %d %s %v", name, status, raw, err)
		}
	}
	l := &ledger{acked: map[int64]bool{}, sent: map[int64]bool{}, rows: cfg.Rows}
	far := func() time.Time { return time.Now().Add(time.Hour) }

	// 1. Saturation, closed loop.
	fmt.Fprintf(out, "calibrating for %s with %d workers\n", cfg.Calibrate, cfg.Workers)
	// Saturation is end to end: requests acknowledged per second of the time until
	// their rows were all queryable, since the consumers, not the edge, bound it.
	start := time.Now()
	n := load(ctx, s, l, cfg.Workers, 0, after(cfg.Calibrate), far)
	if err := waitStored(ctx, s, n*int64(cfg.Rows), 5*time.Minute); err != nil {
		return fmt.Errorf("calibration: %w", err)
	}
	rep.Saturation = float64(n) / time.Since(start).Seconds()
	target := 0.7 * rep.Saturation
	fmt.Fprintf(out, "saturation %.1f requests/s end to end (%d rows each); chaos at %.1f requests/s for %s\n", rep.Saturation, cfg.Rows, target, cfg.Chaos)

	// 2. Load at 70% with kills.
	chaosEnd := time.Now().Add(cfg.Chaos)
	// A request in flight when the chaos ends is retried for a while more: the last
	// restart may still be recovering.
	giveUp := func() time.Time { return chaosEnd.Add(3 * time.Minute) }
	loadDone := make(chan struct{})
	go func() {
		defer close(loadDone)
		load(ctx, s, l, 4*cfg.Workers, target, after(cfg.Chaos), giveUp)
	}()
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 1))
	targets := []string{"svcd", "engine", "broker"}
	slots := cfg.Kills * len(targets)
	slot := cfg.Chaos / time.Duration(max(slots, 1))
	probe := 0
	for i := range slots {
		slotStart := time.Now()
		at := time.Duration(float64(slot) * (0.1 + 0.4*rng.Float64()))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(at):
		}
		what := targets[i%len(targets)]
		killed := time.Now()
		pick := 0
		if len(s.nodes) > 1 || s.kafka != nil { // which node or broker; one of each draws nothing
			pick = rng.IntN(1 << 20)
		}
		if err := kill(ctx, s, what, pick); err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("kill %s: %v", what, err))
			continue
		}
		probe++
		_, err := waitQueryable(ctx, s, probe)
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("after killing %s: %v", what, err))
			continue
		}
		rec := time.Since(killed)
		rep.Restarts[what]++
		rep.Recovery = append(rep.Recovery, rec)
		fmt.Fprintf(out, "killed %s at %s; restarted and queryable again after %s\n", what, killed.Format(time.TimeOnly), rec.Round(time.Millisecond))
		if rest := slot - time.Since(slotStart); rest > 0 && i < slots-1 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(rest):
			}
		}
	}
	<-loadDone

	// 3. The 70% load without kills, the baseline recovery is compared with; then the
	// overload at cfg.OverloadFactor times saturation, open loop; then 70% again.
	fmt.Fprintf(out, "baseline load at %.1f requests/s for %s\n", target, cfg.Recover)
	start = time.Now()
	n = load(ctx, s, l, 4*cfg.Workers, target, after(cfg.Recover), func() time.Time { return time.Now() })
	rep.BaselineRate = float64(n) / time.Since(start).Seconds()
	fmt.Fprintf(out, "overload at %.1f requests/s (%gx) for %s\n", cfg.OverloadFactor*rep.Saturation, cfg.OverloadFactor, cfg.Overload)
	overload(ctx, s, l, cfg.OverloadFactor*rep.Saturation, cfg.Overload, rep)
	// The overload left a backlog in the log; the service has recovered when it has
	// stored it and sustains the 70% load again.
	l.mu.Lock()
	ackedRows := int64(len(l.acked)) * int64(cfg.Rows)
	l.mu.Unlock()
	drain := time.Now()
	if err := waitStored(ctx, s, ackedRows, 5*time.Minute); err != nil {
		rep.Errors = append(rep.Errors, "after the overload: "+err.Error())
	}
	rep.Drain = time.Since(drain)
	fmt.Fprintf(out, "backlog stored %s after the overload; recovery load at %.1f requests/s for %s\n", rep.Drain.Round(time.Millisecond), target, cfg.Recover)
	rep.Target = target
	start = time.Now()
	n = load(ctx, s, l, 4*cfg.Workers, target, after(cfg.Recover), func() time.Time { return time.Now() })
	rep.RecoverRate = float64(n) / time.Since(start).Seconds()

	// 4. Count.
	return count(ctx, s, l, rep, out)
}

// waitStored waits until the chaos table holds at least rows rows.
func waitStored(ctx context.Context, s *stack, rows int64, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		got, err := s.query(ctx, "SELECT count() AS n FROM chaos")
		if err == nil && len(got) == 1 && num(got[0]["n"]) >= rows {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%d rows not stored within %s (%v)", rows, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kill kill -9s one process of the stack and restarts what the stack must restart
// (svcd restarts its embedded engines itself, the shared engine restarts itself). With
// several nodes or brokers, n picks which.
func kill(ctx context.Context, s *stack, what string, n int) error {
	switch what {
	case "svcd":
		i := n % len(s.nodes)
		s.killNode(i)
		return s.startNode(ctx, i)
	case "engine":
		pids := s.enginePIDs()
		if len(pids) == 0 {
			return fmt.Errorf("no engine process (svcd %d)", s.svcdPID())
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		return nil
	case "broker":
		if s.kafka != nil {
			id := n%s.cfg.Brokers + 1
			if err := s.kafka.KillBroker(id); err != nil {
				return err
			}
			return s.kafka.StartBroker(ctx, id)
		}
		if pid := s.broker.PID(); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		// Start waits for the old process to be gone (its PID file) before starting.
		return s.broker.Start(ctx)
	}
	return fmt.Errorf("unknown target %s", what)
}

// waitQueryable sends probe row n until acknowledged, then waits until it can be read
// back: the service accepts and serves again.
func waitQueryable(ctx context.Context, s *stack, n int) (time.Duration, error) {
	start := time.Now()
	deadline := start.Add(3 * time.Minute)
	key := "probe-" + strconv.Itoa(n)
	body := fmt.Appendf(nil, `{"probe":%d}`, n)
	for {
		status, _, _, err := s.do(ctx, "POST", "/v1/tables/chaos_probe", body, "Idempotency-Key", key)
		if err == nil && status/100 == 2 {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return 0, fmt.Errorf("probe %d not acknowledged within 3 minutes (last %d %v)", n, status, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for {
		rows, err := s.query(ctx, "SELECT count() AS n FROM chaos_probe WHERE probe = "+strconv.Itoa(n))
		if err == nil && len(rows) == 1 && num(rows[0]["n"]) >= 1 {
			return time.Since(start), nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return 0, fmt.Errorf("probe %d not queryable within 3 minutes (%v)", n, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// overload offers rate requests/s open loop, each sent once, with a bounded number in
// flight, sampling svcd's RSS; every answer must be 2xx, or 429/503 with Retry-After.
func overload(ctx context.Context, s *stack, l *ledger, rate float64, d time.Duration, rep *Report) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	inflight := make(chan struct{}, 512)
	stop := after(d)
	rssDone := make(chan struct{})
	go func() {
		defer close(rssDone)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if v := rssMiB(s.svcdPID()); v > 0 {
					mu.Lock()
					rep.RSSMaxMiB = max(rep.RSSMaxMiB, v)
					mu.Unlock()
				}
			}
		}
	}()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	skipped := int64(0)
	begin, released := time.Now(), 0
	due := 0
loop:
	for {
		if released >= due {
			select {
			case <-stop:
				break loop
			case <-ctx.Done():
				break loop
			case <-tick.C:
			}
			due = int(rate * time.Since(begin).Seconds()) // released by the clock, as in load
			continue
		}
		released++
		select {
		case inflight <- struct{}{}:
		default:
			skipped++
			continue
		}
		r := l.next.Add(1)
		l.mu.Lock()
		l.sent[r] = true
		l.mu.Unlock()
		wg.Go(func() {
			defer func() { <-inflight }()
			status, retryAfter, body, err := s.do(ctx, "POST", "/v1/tables/chaos", l.body(r), "Idempotency-Key", "chaos-"+strconv.FormatInt(r, 10))
			mu.Lock()
			defer mu.Unlock()
			rep.OverloadAnswers[status]++
			switch {
			case err != nil:
				rep.OverloadViolations = append(rep.OverloadViolations, "no answer: "+err.Error())
			case status/100 == 2:
				l.mu.Lock()
				l.acked[r] = true
				l.mu.Unlock()
			case (status == 429 || status == 503) && retryAfter != "":
			default:
				rep.OverloadViolations = append(rep.OverloadViolations, fmt.Sprintf("%d Retry-After %q: %.200s", status, retryAfter, body))
			}
		})
	}
	wg.Wait()
	<-rssDone
	if skipped > 0 {
		rep.OverloadAnswers[-1] = skipped // offered but not sent: 512 already in flight
	}
}

// count waits until the stored rows stop changing, then compares them with the ledger.
func count(ctx context.Context, s *stack, l *ledger, rep *Report, out io.Writer) error {
	l.mu.Lock()
	rep.Requests, rep.Acked = int64(len(l.sent)), int64(len(l.acked))
	rep.AckedRows = rep.Acked * int64(l.rows)
	l.mu.Unlock()
	fmt.Fprintf(out, "waiting until the %d acknowledged rows are stored\n", rep.AckedRows)
	// Every acknowledged row is in the log; the consumers are done when the count
	// reaches them and stops moving (rows of requests given up may still land).
	deadline := time.Now().Add(5 * time.Minute)
	last, stable := int64(-1), time.Now()
	for {
		rows, err := s.query(ctx, "SELECT count() AS n FROM chaos")
		if err == nil && len(rows) == 1 {
			n := num(rows[0]["n"])
			if n != last {
				last, stable = n, time.Now()
			}
			if n >= rep.AckedRows && time.Since(stable) > 5*time.Second {
				break
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			break // counted as it is: what is missing is lost
		}
		if time.Since(stable) > 90*time.Second {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	rows, err := s.query(ctx, "SELECT toInt64(r) AS r, count() AS c, uniqExact(toInt64(i)) AS u FROM chaos GROUP BY r")
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[int64]int64{}
	for _, row := range rows {
		r, c, u := num(row["r"]), num(row["c"]), num(row["u"])
		rep.StoredRows += c
		rep.Duplicated += c - u
		seen[r] = u
		if !l.acked[r] {
			rep.UnackedLanded += u
		}
	}
	for r := range l.acked {
		rep.Lost += int64(l.rows) - seen[r]
	}
	return nil
}
