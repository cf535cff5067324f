package cloudwatchlogs

import (
	"testing"

	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/rows/rowstest"
)

// FuzzDecode: Decode must not panic; on success every row is a compact JSON object, on error
// the buffer is untouched.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"data_message.json", "control_message.json", "lambda_account_policy.json"} {
		f.Add(sample(f, name))
	}
	f.Add([]byte(`{"messageType":"DATA_MESSAGE","logEvents":[{"timestamp":1,"message":" {\"a\":\"\\u00e9\"}"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var b rows.Buffer
		if err := Decode(body, &b); err != nil {
			if len(b.B) != 0 || b.Rows != 0 {
				t.Fatal("rows left after an error")
			}
			return
		}
		rowstest.Lines(t, &b)
	})
}
