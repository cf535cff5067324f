#!/usr/bin/env bash
# moto: the S3/STS/IAM-compatible server (PyPI moto[server]) the tests use as customer storage.
#   moto.sh start DIR PYTHON   start it on a free port; DIR/endpoint holds its URL, DIR/pid its PID
#   moto.sh stop DIR           stop the one DIR/pid names
set -euo pipefail
dir=$2
case $1 in
start)
  py=$3
  mkdir -p "$dir"
  bash "$0" stop "$dir"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  setsid "$py" -m moto.server -H 127.0.0.1 -p "$port" >"$dir/moto.log" 2>&1 </dev/null &
  echo $! >"$dir/pid"
  for _ in $(seq 1 300); do
    if curl -fsS "http://127.0.0.1:$port/moto-api/" >/dev/null 2>&1; then
      echo "http://127.0.0.1:$port" >"$dir/endpoint"
      exit 0
    fi
    kill -0 "$(cat "$dir/pid")" 2>/dev/null || { cat "$dir/moto.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "moto did not serve within 30s" >&2
  exit 1
  ;;
stop)
  if [ -f "$dir/pid" ]; then
    kill "$(cat "$dir/pid")" 2>/dev/null || true
    rm -f "$dir/pid" "$dir/endpoint"
  fi
  ;;
esac
