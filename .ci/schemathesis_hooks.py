# Schemathesis hooks for .ci/fuzz-api.sh (loaded through SCHEMATHESIS_HOOKS).
import schemathesis


@schemathesis.hook
def filter_failure(context, failure, case, response):
    # A request whose head (request line and headers) does not fit the HTTP server's read
    # buffer is refused 431 `headers_too_large` by the parser, before any route or handler
    # runs, whatever the operation. That is the transport's limit, which the document does
    # not repeat on every operation; fuzzed arrays of query parameters reach it. Every other
    # answer is checked as usual.
    if _prometheus_form_same_as_valid(failure, case) or _issued_cursor_refused(failure, response):
        return False
    return response is None or response.status_code != 431


# A page cursor (`cursor` of GET /v1/tables/{table}/dead_letters) is the `next_cursor` of an
# earlier page, a token the service issued: which ones exist is state, as names are. A
# schema-valid string that is not one is answered 400 `invalid_cursor` naming `cursor`, as
# the document says. Only that answer is accepted; any other refusal still fails.
def _issued_cursor_refused(failure, response):
    if type(failure).__name__ != "RejectedPositiveData" or response is None or response.status_code != 400:
        return False
    try:
        body = response.json()
    except Exception:
        return False
    error = body.get("error") if isinstance(body, dict) else None
    return isinstance(error, dict) and error.get("code") == "invalid_cursor" and error.get("field") == "cursor"


# Prometheus's POST /labels and /series take `match[]` as an
# application/x-www-form-urlencoded field repeated once per selector (the document says an
# array of strings). A form field is text on the wire, so a negative case that draws one
# scalar instead of the array (a string, number or boolean) is sent as `match[]=AAA` or
# `match[]=true`: byte for byte the one-item array ["AAA"] or ["true"], which is schema-valid
# and rightly answered 200. Only that case is dropped: a negative body and nothing else
# negative, on those two operations, whose fields are all scalars, so the bytes sent are
# those of a valid request.
_PROMETHEUS_FORMS = {("POST", "/prometheus/api/v1/labels"), ("POST", "/prometheus/api/v1/series")}


def _prometheus_form_same_as_valid(failure, case):
    if type(failure).__name__ != "AcceptedNegativeData":
        return False
    if (case.method.upper(), case.operation.path) not in _PROMETHEUS_FORMS:
        return False
    meta = case._meta
    if meta is None:
        return False
    negative = {location.name for location, info in meta.components.items() if info.mode.is_negative}
    if negative != {"BODY"}:
        return False
    body = case.body
    if not isinstance(body, dict) or not set(body) <= {"match[]", "start", "end", "limit"}:
        return False
    return all(isinstance(value, (str, int, float, bool)) for value in body.values())


# application/x-protobuf bodies. JSON Schema describes them only as binary strings, and the
# bytes a fuzzer draws are not the message. So that the operations taking them are fuzzed
# (parameters, headers, credentials, databases) and not left out, a drawn body becomes a
# valid message of the operation, and a value that is not binary (a negative case) becomes
# bytes no decoder reads. The decoders themselves are fuzzed by the Go fuzz targets
# (FuzzDecode for remote write) and tested with the upstream clients.

NOT_A_MESSAGE = b"\xff\xff\xff\xff\xff"  # an unterminated varint: neither snappy nor protobuf


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number, payload):  # a length-delimited protobuf field
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _snappy(data):
    # The snappy block format with literals only: valid input for every snappy decoder.
    out = bytearray(_varint(len(data)))
    for i in range(0, len(data), 60):
        chunk = data[i : i + 60]
        out.append((len(chunk) - 1) << 2)
        out += chunk
    return bytes(out)


def _write_request(data):
    # prometheus.WriteRequest: one series named after the drawn bytes, one sample.
    import struct, time

    labels = _field(1, _field(1, b"__name__") + _field(2, b"fuzz_api")) + _field(
        1, _field(1, b"drawn") + _field(2, b"x" + data.hex().encode())
    )
    sample = b"\x09" + struct.pack("<d", float(len(data))) + b"\x10" + _varint(int(time.time() * 1000))
    return _field(1, labels + _field(2, sample))


@schemathesis.serializer("application/x-protobuf")
def protobuf(ctx, value):
    drawn = value if isinstance(value, bytes) else getattr(value, "data", None)
    if not isinstance(drawn, bytes):
        return NOT_A_MESSAGE
    if ctx.case.operation.path == "/prometheus/api/v1/write":
        return _snappy(_write_request(drawn))
    # OTLP: the empty message is a valid export request (nothing to write).
    return b""
