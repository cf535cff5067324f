package cloudwatchlogs

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/rows/rowstest"
)

func sample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecode(t *testing.T) {
	f := func(body []byte, want ...string) {
		t.Helper()
		var b rows.Buffer
		if err := Decode(body, &b); err != nil {
			t.Fatal(err)
		}
		got := rowstest.Lines(t, &b)
		if len(got) != len(want) {
			t.Fatalf("%d rows, want %d:\n%s", len(got), len(want), b.B)
		}
		for i := range want {
			rowstest.Equal(t, got[i], want[i])
		}
	}
	const trail = `"owner":"111111111111","log_group":"CloudTrail/logs","log_stream":"111111111111_CloudTrail/logs_us-east-1",
	"subscription_filters":["RecipientStream"]`
	short := `{"timestamp":"2015-05-28T15:27:35.000000000Z","id":"3195310660696698337880902507980421114328961542429EXAMPLE",
	"message":"{\"eventVersion\":\"1.03\",\"userIdentity\":{\"type\":\"Root\"}}",
	"message_json":{"eventVersion":"1.03","userIdentity":{"type":"Root"}},` + trail + `}`
	f(sample(t, "data_message.json"),
		`{"timestamp":"2015-05-28T15:27:35.000000000Z","id":"3195310660696698337880902507980421114328961542429EXAMPLE",
		"message":"{\"eventVersion\":\"1.03\",\"userIdentity\":{\"type\":\"Root\"},\"eventTime\":\"2015-05-28T15:27:35Z\",\"eventSource\":\"signin.amazonaws.com\",\"eventName\":\"ConsoleLogin\",\"awsRegion\":\"us-east-1\",\"sourceIPAddress\":\"192.0.2.10\"}",
		"message_json":{"eventVersion":"1.03","userIdentity":{"type":"Root"},"eventTime":"2015-05-28T15:27:35Z",
		                "eventSource":"signin.amazonaws.com","eventName":"ConsoleLogin","awsRegion":"us-east-1","sourceIPAddress":"192.0.2.10"},`+trail+`}`,
		short, short)

	const lambda = `"owner":"123456789012","log_group":"/aws/lambda/checkout",
	"log_stream":"2025/06/01/[$LATEST]0123456789abcdef0123456789abcdef","subscription_filters":["AccountLevelPolicy"],
	"policy_level":"ACCOUNT_LEVEL_POLICY"`
	f(sample(t, "lambda_account_policy.json"),
		`{"timestamp":"2025-06-01T12:00:00.123000000Z","id":"38334420916467383480000000000000000000000000000000000000",
		"message":"START RequestId: 6f1c2d3e-0000-4000-8000-000000000001 Version: $LATEST\n",`+lambda+`}`,
		`{"timestamp":"2025-06-01T12:00:00.456000000Z","id":"38334420916467383480000000000000000000000000000000000001",
		"message":"2025-06-01T12:00:00.456Z\t6f1c2d3e-0000-4000-8000-000000000001\tERROR\tcart not found: \"c-42\"\n",
		"extracted_fields":{"level":"ERROR","request_id":"6f1c2d3e-0000-4000-8000-000000000001"},`+lambda+`}`)

	f(sample(t, "control_message.json")) // health check: no rows

	// Messages that only look like JSON stay text; leading whitespace is allowed.
	f([]byte(`{"messageType":"DATA_MESSAGE","logEvents":[
		{"timestamp":0,"message":"{not json"},
		{"timestamp":0,"message":" \n{\"a\": [1, 2]}"},
		{"timestamp":0,"message":"[1,2]"},
		{"timestamp":0,"message":"{\"a\":1} trailing"}]}`),
		`{"timestamp":"1970-01-01T00:00:00.000000000Z","id":"","message":"{not json"}`,
		`{"timestamp":"1970-01-01T00:00:00.000000000Z","id":"","message":" \n{\"a\": [1, 2]}","message_json":{"a":[1,2]}}`,
		`{"timestamp":"1970-01-01T00:00:00.000000000Z","id":"","message":"[1,2]"}`,
		`{"timestamp":"1970-01-01T00:00:00.000000000Z","id":"","message":"{\"a\":1} trailing"}`)
}

func TestDecodeErrors(t *testing.T) {
	f := func(body, want string) {
		t.Helper()
		b := rows.Buffer{B: []byte("{}\n"), Rows: 1}
		err := Decode([]byte(body), &b)
		if err == nil || err.Error() != want {
			t.Fatalf("%s:\n got %v\nwant %s", body, err, want)
		}
		if string(b.B) != "{}\n" || b.Rows != 1 {
			t.Fatal("buffer changed")
		}
	}
	f(`[]`, "not a CloudWatch Logs subscription payload: the body is not a JSON object")
	f(`{"logEvents":[]}`, "not a CloudWatch Logs subscription payload: it has no messageType")
	f(`{"messageType":"DATA_MESSAGE"}`, "not a CloudWatch Logs subscription payload: it has no logEvents")
	f(`{"messageType":"OTHER","logEvents":[]}`, `messageType "OTHER" is neither DATA_MESSAGE nor CONTROL_MESSAGE`)
	f(`{"messageType":"DATA_MESSAGE","logEvents":{}}`, "logEvents is an object, not an array")
	f(`{"messageType":"DATA_MESSAGE","owner":1,"logEvents":[]}`, "owner is a number, not a string")
	f(`{"messageType":"DATA_MESSAGE","logEvents":[{"timestamp":1,"message":"a"},"x"]}`, "logEvents[1] is a string, not an object")
	f(`{"messageType":"DATA_MESSAGE","logEvents":[{"message":"a"}]}`, "logEvents[0]: the event has no timestamp")
	f(`{"messageType":"DATA_MESSAGE","logEvents":[{"timestamp":1}]}`, "logEvents[0]: the event has no message")
	f(`{"messageType":"DATA_MESSAGE","logEvents":[{"timestamp":"1","message":"a"}]}`, "logEvents[0]: timestamp is a string, not a number")
	f(`{"messageType":"DATA_MESSAGE","logEvents":[{"timestamp":1.5,"message":"a"}]}`, "logEvents[0]: timestamp 1.5 is not a whole number of milliseconds")
	f(`{"messageType":"DATA_MESSAGE","logEvents":[{"timestamp":1,"message":"a"}],}`, `invalid JSON at offset 74: expected a string as object key, found "}"`)
}

func TestMaxBytes(t *testing.T) {
	b := rows.Buffer{MaxBytes: 300}
	err := Decode(sample(t, "data_message.json"), &b)
	if !errors.Is(err, rows.ErrTooLarge) || !strings.HasPrefix(err.Error(), "the rows would be larger") || b.Rows != 0 {
		t.Fatalf("got %v, %d rows", err, b.Rows)
	}
}
