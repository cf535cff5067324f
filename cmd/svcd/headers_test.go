package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// TestRepeatedCredentialHeadersAreRefused: a header that carries a key or chooses what a
// request acts on, given twice, is 400 on every route and on OTLP/gRPC (one rule,
// repeatedHeader): two X-Cloud-Firehose-Access-Key headers were accepted, the first
// read, whatever a proxy in front had checked.
func TestRepeatedCredentialHeadersAreRefused(t *testing.T) {
	s := svcdtest.Start(t)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "fh"})
	send := func(path string, body any, headers map[string][]string) (int, string) {
		t.Helper()
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", s.URL+path, strings.NewReader(string(raw)))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range headers {
			req.Header[http.CanonicalHeaderKey(k)] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := readAll(resp)
		return resp.StatusCode, string(b)
	}
	key := "Bearer " + s.AdminKey
	for _, c := range []struct {
		path    string
		body    any
		headers map[string][]string
	}{
		{"/v1/tables/fh?transform=firehose", firehoseBody("dup-1", `{"n":1}`),
			map[string][]string{"X-Cloud-Firehose-Access-Key": {s.AdminKey, "svck_other"}}},
		{"/v1/tables/fh?transform=firehose", firehoseBody("dup-2", `{"n":1}`),
			map[string][]string{"X-Amz-Firehose-Access-Key": {s.AdminKey, s.AdminKey}}},
		{"/v1/tables/fh", map[string]int{"n": 1},
			map[string][]string{"Authorization": {key}, "X-Service-Database": {"default", "other"}}},
		{"/v1/tables/fh", map[string]int{"n": 1},
			map[string][]string{"Authorization": {key}, "Idempotency-Key": {"a", "b"}}},
	} {
		code, body := send(c.path, c.body, c.headers)
		if code != 400 || !strings.Contains(body, "duplicate_header") {
			t.Errorf("POST %s with %v: %d %s, want 400 duplicate_header", c.path, c.headers, code, body)
		}
	}

	conn, err := grpc.NewClient(strings.TrimPrefix(s.URL, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", key,
		"x-service-database", "default", "x-service-database", "other")
	_, err = collogspb.NewLogsServiceClient(conn).Export(ctx, &collogspb.ExportLogsServiceRequest{})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "X-Service-Database") {
		t.Errorf("gRPC export with two x-service-database: %v, want INVALID_ARGUMENT", err)
	}
	s.WaitCaughtUp("fh", time.Minute)
	if n := s.Count("fh"); n != 0 {
		t.Errorf("%d rows landed from refused requests", n)
	}
}
