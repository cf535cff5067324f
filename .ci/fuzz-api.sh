#!/usr/bin/env bash
# fuzz-api: schemathesis over the served OpenAPI document, every check, against a fresh svcd.
# Run through `go tool task fuzz-api`, which sets the variables below.
#   VENV          the venv holding schemathesis (created here when missing)
#   SCHEMATHESIS_VERSION, HYPOTHESIS_VERSION   pinned versions
#   BIN           directory of svcd;  DATA  a scratch directory (wiped)
#   MAX_EXAMPLES  examples per operation;  KAFKA_SEEDS  an existing broker, optional
set -euo pipefail
ci=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$VENV/bin/st" ]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "schemathesis==$SCHEMATHESIS_VERSION" "hypothesis==$HYPOTHESIS_VERSION"
fi
rm -rf "$DATA" && mkdir -p "$DATA"
DATA=$(cd "$DATA" && pwd)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
key="svck_fuzz_api_$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
# An existing broker (KAFKA_SEEDS, with its credentials in KAFKA_SASL_FILE) is used when
# given; otherwise svcd runs its own.
SVC_DATA_DIR="$DATA/svcd" SVC_HTTP_ADDR="127.0.0.1:$port" SVC_BOOTSTRAP_API_KEY="$key" \
  SVC_KAFKA_SEEDS="${KAFKA_SEEDS:-}" SVC_KAFKA_SASL_FILE="${KAFKA_SASL_FILE:-}" SVC_BATCH_LINGER=50ms "$BIN/svcd" >"$DATA/svcd.log" 2>&1 &
pid=$!
st=
trap 'kill $st $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
trap 'exit 143' TERM INT
for _ in $(seq 1 600); do
  curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { cat "$DATA/svcd.log"; exit 1; }
  sleep 0.2
done
# Every app is installed (as the bootstrap admin, through the API) so that the operations
# the apps gate are fuzzed, not just answered 403.
session=$(curl -sS --fail-with-body -X POST "http://127.0.0.1:$port/v1/auth/login" -H 'Content-Type: application/json' \
  -d "$(python3 -c 'import json, sys; print(json.dumps({"username": "admin", "password": open(sys.argv[1]).read().strip()}))' "$DATA/svcd/admin.password")" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')
for app in logsearch opentelemetry prometheus; do
  curl -sS --fail-with-body -o /dev/null -X PUT "http://127.0.0.1:$port/v1/apps/$app?organization=default&cluster=default" -H "Authorization: Bearer $session"
done
# application/x-protobuf bodies (OTLP, Prometheus remote write) are built by the serializer in
# schemathesis_hooks.py: a drawn body becomes a valid message of its operation.
# Hypothesis keeps its database in the working directory: the scratch one.
cd "$DATA"
SCHEMATHESIS_HOOKS="$ci/schemathesis_hooks.py" "$VENV/bin/st" --config-file "$ci/schemathesis.toml" run "http://127.0.0.1:$port/v1/openapi.json" --url "http://127.0.0.1:$port" \
  --checks all -H "Authorization: Bearer $key" --max-examples "$MAX_EXAMPLES" \
  --report junit --report-dir "$DATA/report" \
  "$@" &
# In the background, so that a TERM (a CI timeout) stops schemathesis and svcd too.
st=$!
wait $st
