package main

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/testenv"
)

// TestMalformedRequestsLogNoToken sends requests fasthttp cannot parse, each carrying a
// bearer token, and checks that svcd's log tells of them without the token.
func TestMalformedRequestsLogNoToken(t *testing.T) {
	s := svcdtest.Start(t)
	const token = "svck_MALFORMED_REQUEST_SECRET_TOKEN"
	requests := []string{
		"GET /v1/tables HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token + "\r\nbroken header line\r\n\r\n",
		"GET /v1/tables HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token + "\r\nContent-Length: nope\r\n\r\n",
		"\x00\x01GARBAGE " + token + "\r\n\r\n",
		"GET /v1/tables HTTP/1.1\r\nAuthorization: Bearer " + token + "\r\nX-Big: " + strings.Repeat("a", 16<<10) + "\r\n\r\n",
	}
	for _, req := range requests {
		c, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(30 * time.Second))
		io.WriteString(c, req)
		answer, _ := io.ReadAll(c) // until the server answers and closes
		c.Close()
		// Answered in the API's error envelope, as JSON, quoting nothing of the request.
		if !strings.Contains(string(answer), "Content-Type: application/json") || !strings.Contains(string(answer), `{"error":{"code":`) ||
			strings.Contains(string(answer), "MALFORMED_REQUEST_SECRET") {
			t.Errorf("answer to a malformed request:\n%s", answer)
		}
	}
	// fasthttp logs each failure as it closes the connection: wait for the messages.
	testenv.Eventually(t, 30*time.Second, func() (bool, string) {
		logs := s.Logs()
		return strings.Count(strings.ToLower(logs), "error when") >= 3, "svcd did not log the malformed requests:\n" + logs
	})
	logs := s.Logs()
	if strings.Contains(logs, token) || strings.Contains(logs, "MALFORMED_REQUEST_SECRET") {
		t.Fatalf("svcd's log holds the token:\n%s", logs)
	}
}
