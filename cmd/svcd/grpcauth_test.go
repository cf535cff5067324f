package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/testenv"
)

// procStatusKiB reads a "<field>: <n> kB" line of /proc/<pid>/status.
func procStatusKiB(t *testing.T, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatalf("%s: %q", field, rest)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// metricValue reads one unlabelled sample of svcd's /metrics.
func metricValue(t *testing.T, s *svcdtest.Service, name string) string {
	t.Helper()
	r := s.Must(200, "GET", "/metrics", nil)
	for _, line := range strings.Split(string(r.Body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	t.Fatalf("/metrics has no %s", name)
	return ""
}

// bombLogs is an OTLP logs export of about n bytes of zeros (an unknown bytes field): a
// gzip bomb when sent compressed (100 MiB compress to about 100 KiB).
func bombLogs(n int) *collogspb.ExportLogsServiceRequest {
	req := &collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{ScopeLogs: []*logspb.ScopeLogs{{
		LogRecords: []*logspb.LogRecord{{TimeUnixNano: 1700000000000000000}}}}}}}
	req.ProtoReflect().SetUnknown(protowire.AppendBytes(protowire.AppendTag(nil, 1000, protowire.BytesType), make([]byte, n)))
	return req
}

// TestOTLPGRPCRefusesBeforeDecompressing is the probe's attack: gzip-compressed OTLP/gRPC
// messages of 95 MiB (about 95 KiB on the wire), four at once and again, without a key
// and with a wrong one. Each is UNAUTHENTICATED, svcd reads none of them (its message
// counter stays 0) and its peak memory (VmHWM) does not grow by the messages' size:
// decompressing one cost 280 MiB before the key was checked at the headers.
func TestOTLPGRPCRefusesBeforeDecompressing(t *testing.T) {
	s := svcdtest.Start(t)
	conn, err := grpc.NewClient(strings.TrimPrefix(s.URL, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(200<<20)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := collogspb.NewLogsServiceClient(conn)
	bomb := bombLogs(95 << 20)
	var wire bytes.Buffer
	zw := gzip.NewWriter(&wire)
	zw.Write(bomb.ProtoReflect().GetUnknown())
	zw.Close()
	t.Logf("message of %d MiB, %d KiB gzip-compressed", 95, wire.Len()>>10)

	before := procStatusKiB(t, s.PID(), "VmHWM")
	for _, auth := range [][]string{nil, {"authorization", "Bearer not-a-key"}, {"authorization", ""}} {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				ctx := metadata.AppendToOutgoingContext(context.Background(), auth...)
				_, err := client.Export(ctx, bomb, grpc.UseCompressor("gzip"))
				if status.Code(err) != codes.Unauthenticated {
					t.Errorf("export with %q: %v, want UNAUTHENTICATED", auth, err)
				}
			})
		}
		wg.Wait()
	}
	after := procStatusKiB(t, s.PID(), "VmHWM")
	t.Logf("svcd VmHWM %d MiB before, %d MiB after", before>>10, after>>10)
	if grown := (after - before) >> 10; grown > 48 {
		t.Errorf("svcd's peak memory grew by %d MiB on refused exports", grown)
	}
	if got := metricValue(t, s, "svc_otlp_grpc_messages_received_total"); got != "0" {
		t.Errorf("svcd read %s refused messages", got)
	}
}

// TestOTLPGRPCStreamsPerKeyAndTableHeader: a key holds at most SVC_GRPC_STREAMS exports
// at once (more is RESOURCE_EXHAUSTED, also on another connection, until one ends), and
// an empty x-service-<signal>-table is refused as over HTTP rather than read as absent.
func TestOTLPGRPCStreamsPerKeyAndTableHeader(t *testing.T) {
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword, "SVC_GRPC_STREAMS=2")
	installApp(t, s, "opentelemetry")
	host := strings.TrimPrefix(s.URL, "http://")
	dial := func() *grpc.ClientConn {
		c, err := grpc.NewClient(host, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	withKey := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+s.AdminKey)
	other := collogspb.NewLogsServiceClient(dial())

	// The same rule as HTTP's, for both transports.
	// (svcdtest's Do drops headers given empty: net/http sends them.)
	req, _ := http.NewRequest("POST", s.URL+"/otlp/v1/logs", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+s.AdminKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header["X-Service-Logs-Table"] = []string{""}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("HTTP export with an empty table header: %d, want 400", resp.StatusCode)
	}
	_, err = other.Export(metadata.AppendToOutgoingContext(withKey, "x-service-logs-table", ""), &collogspb.ExportLogsServiceRequest{})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "empty") {
		t.Fatalf("gRPC export with an empty table header: %v, want INVALID_ARGUMENT", err)
	}

	// Two streams that send headers and no message hold the key's two slots.
	held := dial()
	var cancels []context.CancelFunc
	for range 2 {
		ctx, cancel := context.WithCancel(withKey)
		cancels = append(cancels, cancel)
		if _, err := held.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true},
			"/opentelemetry.proto.collector.logs.v1.LogsService/Export"); err != nil {
			t.Fatal(err)
		}
	}
	// waitOpen waits until svcd has n streams open (accepted at their headers).
	waitOpen := func(n string) {
		t.Helper()
		testenv.Eventually(t, time.Minute, func() (bool, string) {
			got := metricValue(t, s, "svc_otlp_grpc_streams_open")
			return got == n, fmt.Sprintf("svcd has %s OTLP/gRPC streams open, want %s", got, n)
		})
	}
	waitOpen("2")
	_, err = other.Export(withKey, &collogspb.ExportLogsServiceRequest{})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(status.Convert(err).Message(), "2 OTLP/gRPC exports in flight") {
		t.Fatalf("a third export of the key: %v, want RESOURCE_EXHAUSTED", err)
	}
	cancels[0]()
	waitOpen("1")
	if _, err := other.Export(withKey, &collogspb.ExportLogsServiceRequest{}); err != nil {
		t.Fatalf("an export beside one held stream: %v", err)
	}
	cancels[1]()
	waitOpen("0")
}
