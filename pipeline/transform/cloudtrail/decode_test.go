package cloudtrail

import (
	"errors"
	"os"
	"testing"

	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/rows/rowstest"
)

func sample(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/log_file.json")
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
	f(sample(t),
		`{"eventVersion":"1.09","userIdentity":{"type":"IAMUser","principalId":"EXAMPLE6E4XEGITWATV6R",
		"arn":"arn:aws:iam::123456789012:user/Mary_Major","accountId":"123456789012","accessKeyId":"AKIAIOSFODNN7EXAMPLE",
		"userName":"Mary_Major","sessionContext":{"attributes":{"creationDate":"2023-07-19T21:11:57Z","mfaAuthenticated":"false"}}},
		"eventTime":"2023-07-19T21:33:41Z","eventSource":"cloudtrail.amazonaws.com","eventName":"StartLogging",
		"awsRegion":"us-east-1","sourceIPAddress":"192.0.2.0",
		"userAgent":"aws-cli/2.13.5 Python/3.11.4 Linux/4.14.255-314-253.539.amzn2.x86_64 exec-env/CloudShell",
		"requestParameters":{"name":"myTrail"},"responseElements":null,"requestID":"9d478fc1-4f10-490f-a26b-EXAMPLE0e932",
		"eventID":"eae87c48-d421-4626-94f5-EXAMPLEac994","readOnly":false,"eventType":"AwsApiCall","managementEvent":true,
		"recipientAccountId":"123456789012","eventCategory":"Management",
		"tlsDetails":{"tlsVersion":"TLSv1.2","cipherSuite":"ECDHE-RSA-AES128-GCM-SHA256","clientProvidedHostHeader":"cloudtrail.us-east-1.amazonaws.com"},
		"sessionCredentialFromConsole":"true","timestamp":"2023-07-19T21:33:41.000000000Z"}`,
		`{"eventVersion":"1.08","userIdentity":{"type":"AssumedRole","principalId":"AROAEXAMPLEID:session",
		"arn":"arn:aws:sts::123456789012:assumed-role/Admin/session","accountId":"123456789012"},
		"eventTime":"2023-07-19T21:35:02Z","eventSource":"s3.amazonaws.com","eventName":"GetObject","awsRegion":"us-east-1",
		"sourceIPAddress":"198.51.100.7","userAgent":"[aws-sdk-go-v2/1.21.0]","errorCode":"AccessDenied","errorMessage":"Access Denied",
		"requestParameters":{"bucketName":"amzn-s3-demo-bucket","key":"reports/2023/q2.csv"},"responseElements":null,
		"additionalEventData":{"bytesTransferredIn":0,"bytesTransferredOut":0.0},"requestID":"EXAMPLE1234567890",
		"eventID":"0f1f1e2e-0000-4000-8000-EXAMPLE00001","readOnly":true,
		"resources":[{"type":"AWS::S3::Object","ARN":"arn:aws:s3:::amzn-s3-demo-bucket/reports/2023/q2.csv"},
		             {"accountId":"123456789012","type":"AWS::S3::Bucket","ARN":"arn:aws:s3:::amzn-s3-demo-bucket"}],
		"eventType":"AwsApiCall","managementEvent":false,"recipientAccountId":"123456789012","eventCategory":"Data",
		"timestamp":"2023-07-19T21:35:02.000000000Z"}`)

	f([]byte(`{"Records":[]}`))
	f([]byte(`{"Other":1,"Records":[{}]}`), `{}`)
	// No timestamp is added when eventTime is missing or unreadable, or "timestamp" is taken.
	f([]byte(`{"Records":[{"eventTime":"yesterday"},{"eventTime":"2023-07-19T21:35:02.5+02:00","timestamp":1},{"eventTime":"2023-07-19T21:35:02\u005a"}]}`),
		`{"eventTime":"yesterday"}`,
		`{"eventTime":"2023-07-19T21:35:02.5+02:00","timestamp":1}`,
		`{"eventTime":"2023-07-19T21:35:02Z","timestamp":"2023-07-19T21:35:02.000000000Z"}`)
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
	f(``, "invalid JSON at offset 0: unexpected end of input, expected a value")
	f(`[{}]`, "not a CloudTrail log file: the body is an array, not an object with a Records array")
	f(`{"records":[]}`, "not a CloudTrail log file: it has no Records array")
	f(`{"Records":{}}`, "Records is an object, not an array")
	f(`{"Records":[{},"x"]}`, "Records[1] is a string, not an object")
	f(`{"Records":[{"a":tru}]}`, `Records[0]: invalid JSON at offset 17: expected true, found "tru}]}"`)
	f(`{"Records":[{}]} x`, `invalid JSON at offset 17: unexpected "x" after the end of the top-level value`)
}

func TestMaxBytes(t *testing.T) {
	b := rows.Buffer{MaxBytes: 1000}
	if err := Decode(sample(t), &b); !errors.Is(err, rows.ErrTooLarge) || b.Rows != 0 || len(b.B) != 0 {
		t.Fatalf("got %v with %d rows", err, b.Rows)
	}
}
