package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/testenv"
)

// nodeNetns is a network namespace the test makes for one node, joined to the test's by
// two veth pairs with private addresses: front carries the node's clients, its engine
// and Temporal, back its brokers and its event store. A partition cuts back.
type nodeNetns struct {
	t           *testing.T
	ip, name    string
	front, back vethLink
}

// vethLink is a veth pair: dev is the test's end, host its address and node the
// address of the namespace's end.
type vethLink struct {
	dev, host, node string
}

// newNodeNetns makes the namespace and its links, named after this process (so unique
// per run: interface names have at most 15 bytes) on a free 10.213.<n>.0/29, and removes
// them when the test ends, whether it passed or not.
func newNodeNetns(t *testing.T, ip string) *nodeNetns {
	t.Helper()
	n := &nodeNetns{t: t, ip: ip, name: fmt.Sprintf("svc-partition-%d", os.Getpid())}
	subnet := freeSubnet(t)
	n.run("netns", "add", n.name)
	t.Cleanup(func() { n.cleanup("netns", "del", n.name) })
	for i, l := range []*vethLink{&n.front, &n.back} {
		side := "fb"[i]
		*l = vethLink{dev: fmt.Sprintf("sv%c%xh", side, os.Getpid()),
			host: fmt.Sprintf("10.213.%d.%d", subnet, 4*i+1), node: fmt.Sprintf("10.213.%d.%d", subnet, 4*i+2)}
		peer := fmt.Sprintf("sv%c%xn", side, os.Getpid())
		n.run("link", "add", l.dev, "type", "veth", "peer", "name", peer, "netns", n.name)
		t.Cleanup(func() { n.cleanup("link", "del", l.dev) }) // the pair goes with its end
		n.run("addr", "add", l.host+"/30", "dev", l.dev)
		n.run("link", "set", l.dev, "up")
		n.run("-n", n.name, "addr", "add", l.node+"/30", "dev", peer)
		n.run("-n", n.name, "link", "set", peer, "up")
	}
	n.run("-n", n.name, "link", "set", "lo", "up")
	return n
}

// freeSubnet picks n for 10.213.n.0/29 where no interface of the test's namespace has an
// address (another run's links, say).
func freeSubnet(t *testing.T) int {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	used := map[int]bool{}
	for _, a := range addrs {
		if p, ok := a.(*net.IPNet); ok {
			if v4 := p.IP.To4(); v4 != nil && v4[0] == 10 && v4[1] == 213 {
				used[int(v4[2])] = true
			}
		}
	}
	for range 100 {
		if n := rand.IntN(256); !used[n] {
			return n
		}
	}
	t.Fatalf("no free 10.213.n.0/29: %v", used)
	return 0
}

func (n *nodeNetns) run(args ...string) {
	n.t.Helper()
	if out, err := exec.Command(n.ip, args...).CombinedOutput(); err != nil {
		n.t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

func (n *nodeNetns) cleanup(args ...string) {
	if out, err := exec.Command(n.ip, args...).CombinedOutput(); err != nil {
		n.t.Logf("cleanup: ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// cut takes the back link down: packets to and from the node's brokers and event store
// are dropped, no connection is refused or reset. heal brings it up again.
func (n *nodeNetns) cut()  { n.t.Helper(); n.run("link", "set", n.back.dev, "down") }
func (n *nodeNetns) heal() { n.t.Helper(); n.run("link", "set", n.back.dev, "up") }

// ingestMember is one member of a deployment's ingest consumer group: the address the
// brokers see it connect from and how many partitions it holds.
type ingestMember struct {
	host       string
	partitions int
}

// ingestGroup describes the consumer group of the deployment's one cluster, on brokers
// that serve this deployment only.
func ingestGroup(t *testing.T, adm *kadm.Client) (state string, members []ingestMember) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	groups, err := adm.ListGroups(ctx)
	if err != nil {
		return "unlisted: " + err.Error(), nil
	}
	var names []string
	for name := range groups {
		if strings.HasPrefix(name, "svc.ingest.") {
			names = append(names, name)
		}
	}
	if len(names) != 1 {
		return fmt.Sprintf("ingest groups %v", names), nil
	}
	described, err := adm.DescribeGroups(ctx, names...)
	if err != nil {
		return "undescribed: " + err.Error(), nil
	}
	g := described[names[0]]
	for _, m := range g.Members {
		im := ingestMember{host: strings.TrimPrefix(m.ClientHost, "/")}
		if a, ok := m.Assigned.AsConsumer(); ok {
			for _, tp := range a.Topics {
				im.partitions += len(tp.Partitions)
			}
		}
		members = append(members, im)
	}
	return g.State, members
}

// waitGroup waits until the ingest group is stable with the node connecting from host
// holding partitions (holds) or absent (!holds), and returns how the group looked.
func waitGroup(t *testing.T, adm *kadm.Client, host string, holds bool, timeout time.Duration, what string) []ingestMember {
	t.Helper()
	var members []ingestMember
	testenv.Eventually(t, timeout, func() (bool, string) {
		var state string
		state, members = ingestGroup(t, adm)
		found := false
		for _, m := range members {
			found = found || (m.host == host && m.partitions > 0)
			if m.host == host && !holds {
				return false, fmt.Sprintf("%s: the group (%s) still has the node: %+v", what, state, members)
			}
		}
		return state == "Stable" && found == holds, fmt.Sprintf("%s: the group is %s: %+v", what, state, members)
	})
	return members
}

// TestNetworkPartition (issue 28, item 8): three nodes under load, one of them in a
// network namespace of its own whose link to the brokers and the event store is cut
// mid-load (packets dropped; its link to its clients, the engine and Temporal stays up,
// so it could still write to the engine), then healed. The cut node stops acknowledging:
// every request sent to it while cut is refused (503 with Retry-After) or unanswered,
// and so is a control-plane command; the other two go on, and the group hands its
// partitions to them. Once healed it rejoins by itself: it acknowledges again, holds
// partitions again and applies what changed meanwhile. Its clients retry what it
// refused with the same Idempotency-Key, and refused requests may still land (the log
// had them): every acknowledged row is stored exactly once.
func TestNetworkPartition(t *testing.T) {
	t.Parallel() // see TestMain
	ip := testenv.NetworkNamespaces(t)
	svcdtest.Requirements(t)
	temporal := testenv.Temporal(t)
	ns := newNodeNetns(t, ip)
	k, err := startThreeBrokers(testenv.KafkaLibs(t), t.TempDir(), ns.back.host)
	if err != nil {
		t.Fatalf("three-broker Kafka: %v", err)
	}
	t.Cleanup(func() { _ = k.Shutdown(context.Background()) })
	cl, err := k.Conn().Client()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)

	// Two nodes in the test's namespace, the engine on the front link's address (every
	// node reaches it), and the third node in the namespace: it reaches the brokers on
	// their link listener, PostgreSQL and Temporal through proxies on the links.
	const metricsToken = "partition-metrics-token"
	d := deploy(t, k, ns.front.host, 2, "SVC_METRICS_TOKEN="+metricsToken)
	events, err := url.Parse(d.events)
	if err != nil {
		t.Fatal(err)
	}
	events.Host = newProxy(t, ns.back.host, events.Host).ln.Addr().String()
	const cut = 2
	d.add(svcdtest.StartInNetns(t, svcdtest.Netns{Name: ns.name, Host: ns.front.node}, append(slices.Clone(d.env),
		"SVC_KAFKA_SEEDS="+k.LinkSeeds(),
		"SVC_EVENTSTORE_URL="+events.String(),
		"SVC_TEMPORAL_ADDR="+newProxy(t, ns.front.host, temporal).ln.Addr().String())...))
	d.createTable("events")
	waitGroup(t, adm, ns.back.node, true, 2*time.Minute, "before the cut")

	l := startLoad(d, "events")
	defer l.stop()
	const probes, minCut = 3, 30 * time.Second
	l.probe(cut, probes)
	l.more(t, 300, 2*time.Minute, "before the cut")

	d.rotate(cut, false)
	cutAt := time.Now()
	ns.cut()
	healed := false
	defer func() { // a node cut off cannot drain when it is stopped
		if !healed {
			ns.cleanup("link", "set", ns.back.dev, "up")
		}
	}()
	waitGroup(t, adm, ns.back.node, false, 2*time.Minute, "its partitions move to the others")
	moved := time.Since(cutAt)
	var refused time.Duration
	testenv.Eventually(t, 2*time.Minute, func() (bool, string) {
		for _, a := range l.answersOf(cut, cutAt) {
			if a.status != http.StatusAccepted {
				refused = a.done.Sub(cutAt)
				return true, ""
			}
		}
		return false, "the cut node has refused nothing since the cut"
	})
	// A control-plane command on the cut node cannot reach the event store either.
	command := commandAnswer(t, d.nodes[cut], "POST", "/v1/tables", `{"name": "during_cut"}`)
	// The others go on: rows, and a key made on one of them, which the cut node cannot
	// know until it is healed.
	var key struct{ Token string }
	d.nodes[0].Must(200, "POST", "/v1/keys", map[string]string{"name": "made-during-cut", "permission": "read_only"}).JSON(t, &key)
	l.more(t, 300, 2*time.Minute, "with a node cut off")
	// The cut lasts until each probe had a request sent after the cut answered: what the
	// cut node answers while cut is then more than what was in flight at the cut.
	testenv.Eventually(t, 2*time.Minute, func() (bool, string) {
		n := 0
		for _, a := range l.answersOf(cut, cutAt) {
			if !a.sent.Before(cutAt) {
				n++
			}
		}
		return n >= probes, fmt.Sprintf("the cut node answered %d requests sent since the cut, want %d", n, probes)
	})
	// And it lasts minCut at least, the load going on: what the node had sent when it was
	// cut then waits for TCP's backed-off retransmissions until well after the heal (its
	// catalog's poll of the event store did), which must not hold the healed node back.
	for time.Since(cutAt) < minCut {
		l.more(t, 10, 2*time.Minute, "with a node cut off")
	}
	if r, err := d.nodes[cut].Do("GET", "/v1/tables", nil, "Authorization", "Bearer "+key.Token); err == nil && r.Status == 200 {
		t.Errorf("the cut node accepted a key made after the cut: its event store is not cut off")
	}

	healAt := time.Now()
	ns.heal()
	healed = true
	var rejoined time.Duration
	testenv.Eventually(t, 2*time.Minute, func() (bool, string) {
		for _, a := range l.answersOf(cut, healAt) {
			if a.status == http.StatusAccepted {
				rejoined = a.done.Sub(healAt)
				return true, ""
			}
		}
		return false, "the healed node has acknowledged nothing since the heal"
	})
	members := waitGroup(t, adm, ns.back.node, true, 2*time.Minute, "after the heal")
	served := time.Since(healAt)
	testenv.Eventually(t, propagationBound, func() (bool, string) {
		r, err := d.nodes[cut].Do("GET", "/v1/tables", nil, "Authorization", "Bearer "+key.Token)
		return err == nil && r.Status == 200, fmt.Sprintf("the key made during the cut, on the healed node: %v %v", err, r)
	})
	applied := time.Since(healAt)

	// While cut, it acknowledged nothing sent to it after the cut: each such request
	// answered before the heal was refused with 503 and Retry-After, or not answered.
	// Requests sent before the cut may have been acknowledged after it (the log had
	// acknowledged them in time).
	statuses, lateAcks := map[string]int{}, 0
	for _, a := range l.answersOf(cut, cutAt) {
		switch {
		case !a.done.Before(healAt):
		case a.sent.Before(cutAt):
			if a.status == http.StatusAccepted {
				lateAcks++
			}
		case a.status == 0:
			statuses["no answer"]++
		case a.status == http.StatusServiceUnavailable && a.retryAfter:
			statuses["503 Retry-After"]++
		default:
			statuses[fmt.Sprint(a.status)]++
			t.Errorf("the cut node answered %d (Retry-After %v) %v after the cut", a.status, a.retryAfter, a.done.Sub(cutAt))
		}
	}
	d.rotate(cut, true)
	l.more(t, 300, 2*time.Minute, "after the heal")
	l.stop()
	l.verify(t, d.nodes[0])
	repeats := 0
	for _, s := range d.nodes {
		repeats += metricSum(t, s, "svc_ingest_duplicate_requests_total", metricsToken)
	}
	t.Logf("cut for %v: its partitions were on the others %v after the cut; it refused %v after, "+
		"answered %v to requests sent while it was cut (and acknowledged %d sent before), and the command %s",
		healAt.Sub(cutAt).Round(time.Millisecond), moved.Round(time.Millisecond), refused.Round(time.Millisecond), statuses, lateAcks, command)
	t.Logf("healed: it acknowledged again %v after the heal, held partitions again %v after (%+v) and knew the key made during the cut %v after; "+
		"%d retried requests were dropped as repeats of one that had landed", rejoined.Round(time.Millisecond), served.Round(time.Millisecond),
		members, applied.Round(time.Millisecond), repeats)
}

// commandAnswer sends a control-plane command to a node that cannot reach its event
// store: it must not be acknowledged, and is answered 503 with Retry-After or not
// within the client's patience. It returns what happened, for the log.
func commandAnswer(t *testing.T, s *svcdtest.Service, method, path, body string) string {
	t.Helper()
	start := time.Now()
	rq, _ := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	rq.Header.Set("Authorization", "Bearer "+s.AdminKey)
	rq.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(rq)
	if err != nil {
		return fmt.Sprintf("not answered within %v (%v)", time.Since(start).Round(time.Millisecond), err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	got := fmt.Sprintf("answered %d %s after %v", resp.StatusCode, raw, time.Since(start).Round(time.Millisecond))
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("%s %s on the cut node: %s, want 503 with Retry-After", method, path, got)
	}
	return got
}

// metricSum adds up every sample of a counter in svcd's /metrics.
func metricSum(t *testing.T, s *svcdtest.Service, name, token string) int {
	t.Helper()
	r := s.Must(200, "GET", "/metrics", nil, "Authorization", "Bearer "+token)
	sum := 0
	for _, line := range strings.Split(string(r.Body), "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok && (strings.HasPrefix(rest, "{") || strings.HasPrefix(rest, " ")) {
			var v float64
			if _, err := fmt.Sscan(rest[strings.LastIndexByte(rest, ' ')+1:], &v); err != nil {
				t.Fatalf("%s: %q", name, line)
			}
			sum += int(v)
		}
	}
	return sum
}
