package chengine

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/svc-data/svc/infra/clickhouse/chdb"
)

// ClickHouse error codes the server raises itself (src/Common/ErrorCodes.cpp).
const (
	codeBadArguments            = 36
	codeNotImplemented          = 48
	codeSyntaxError             = 62
	codeUnknownSetting          = 115
	codeQueryTooLarge           = 62 // ClickHouse reports "Max query size exceeded" as a syntax error
	codeCannotReadAllData       = 33
	codeTooManySimultaneous     = 202
	codeQueryIDAlreadyRunning   = 216
	codeQueryWasCancelled       = 394
	codeUnknownException        = 1002
	codeAuthenticationFailed    = 516
	codeCannotDecompress        = 271
	codeUnknownCodeNameFallback = "UNKNOWN_EXCEPTION"
)

var codeNames = map[int]string{
	codeBadArguments:          "BAD_ARGUMENTS",
	codeNotImplemented:        "NOT_IMPLEMENTED",
	codeSyntaxError:           "SYNTAX_ERROR",
	codeUnknownSetting:        "UNKNOWN_SETTING",
	codeCannotReadAllData:     "CANNOT_READ_ALL_DATA",
	codeTooManySimultaneous:   "TOO_MANY_SIMULTANEOUS_QUERIES",
	codeQueryIDAlreadyRunning: "QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING",
	codeQueryWasCancelled:     "QUERY_WAS_CANCELLED",
	codeCannotDecompress:      "CANNOT_DECOMPRESS",
	codeUnknownException:      codeUnknownCodeNameFallback,
}

// exception is an error in ClickHouse's shape: a code and the text clients parse
// ("Code: N. DB::Exception: ... (NAME)"). status overrides the HTTP status derived from code.
type exception struct {
	code   int
	text   string
	status int
}

func (e *exception) Error() string { return e.text }

// newException builds an exception raised by the server itself.
func newException(code int, format string, args ...any) *exception {
	name := codeNames[code]
	if name == "" {
		name = codeUnknownCodeNameFallback
	}
	return &exception{code: code, text: fmt.Sprintf("Code: %d. DB::Exception: %s. (%s)", code, fmt.Sprintf(format, args...), name)}
}

// asException turns any error into an exception: engine errors keep their code and text.
func asException(err error) *exception {
	var ex *exception
	if errors.As(err, &ex) {
		return ex
	}
	var ce *chdb.Error
	if errors.As(err, &ce) {
		code := ce.Code
		text := ce.Text
		if code == 0 {
			code = codeUnknownException
			text = fmt.Sprintf("Code: %d. DB::Exception: %s. (%s)", code, ce.Text, codeUnknownCodeNameFallback)
		}
		return &exception{code: code, text: text}
	}
	var se *errStatement
	if errors.As(err, &se) {
		return newException(se.code, "%s", se.msg)
	}
	return newException(codeUnknownException, "%v", err)
}

// httpStatus maps an error code to the status ClickHouse's HTTP handler answers with.
func (e *exception) httpStatus() int {
	if e.status != 0 {
		return e.status
	}
	switch e.code {
	case 6, 25, 26, 27, 38, 41, 72, // CANNOT_PARSE_*
		15, 44, 53, 62, 117, 36, 43: // DUPLICATE_COLUMN, ILLEGAL_COLUMN, TYPE_MISMATCH, SYNTAX_ERROR, INCORRECT_DATA, BAD_ARGUMENTS, ILLEGAL_TYPE_OF_ARGUMENT
		return http.StatusBadRequest
	case 60, 46, 47, 50, 56, 81, 115, 63, 73, 336: // UNKNOWN_*
		return http.StatusNotFound
	case codeNotImplemented:
		return http.StatusNotImplemented
	case 159: // TIMEOUT_EXCEEDED
		return http.StatusRequestTimeout
	case codeTooManySimultaneous:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// writeException answers a request that has not sent a byte yet.
func writeException(w http.ResponseWriter, ex *exception) {
	h := w.Header()
	for _, k := range []string{"Content-Encoding", "X-ClickHouse-Format", "X-ClickHouse-Summary", "Content-Length"} {
		h.Del(k)
	}
	h.Set("Content-Type", "text/plain; charset=UTF-8")
	h.Set("X-ClickHouse-Exception-Code", strconv.Itoa(ex.code))
	w.WriteHeader(ex.httpStatus())
	_, _ = io.WriteString(w, ex.text+"\n")
}

// exceptionTagLen is the length of the random tag that frames a mid-stream exception.
const exceptionTagLen = 16

func newExceptionTag() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, exceptionTagLen)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// framedException is the block ClickHouse appends to a response whose status already went
// out (WriteBufferFromHTTPServerResponse): the tag was announced in X-ClickHouse-Exception-Tag.
func framedException(tag string, ex *exception) []byte {
	msg := ex.text
	const maxMsg = 16 * 1024 / 2
	if len(msg) > maxMsg {
		msg = msg[:maxMsg]
	}
	return fmt.Appendf(nil, "\r\n__exception__\r\n%s\r\n%s\n%d %s\r\n__exception__\r\n", tag, msg, len(msg), tag)
}
