#!/bin/bash
# The floor for a unary call's server-side CPU: a bare grpc-js echo server
# (bench/grpc-echo.mts) driven at the given concurrency, and its CPU
# microseconds per call, to set beside the router's per unary increment in
# `bench/cpu-split.sh --batch 1` (run them back to back on a quiet machine).
#   bench/echo-cpu.sh [concurrency=64] [seconds=8]
set -euo pipefail
cd "$(dirname "$0")/.."
concurrency=${1:-64}
seconds=${2:-8}
log=$(mktemp /tmp/tally-echo-XXXXXX.log)
node --import tsx bench/grpc-echo.mts serve 0 >"$log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true; wait 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 80); do grep -q ready "$log" && break; sleep 0.25; done
port=$(awk '/ready/ {print $2}' "$log")
# utime + stime of the server, in clock ticks.
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
before=$(ticks)
started=$(date +%s.%N)
/usr/bin/time -f "%U %S" -o "$log.driver" node --import tsx bench/grpc-echo.mts drive "$port" "$concurrency" "$seconds" >"$log.out"
elapsed=$(echo "$(date +%s.%N) - $started" | bc)
after=$(ticks)
python3 - "$log.out" "$log.driver" "$before" "$after" "$(getconf CLK_TCK)" "$seconds" <<'PY'
import json, sys
out, driver, before, after, hz, seconds = sys.argv[1:]
calls = json.load(open(out))['callsPerSec'] * float(seconds)
server = (int(after) - int(before)) / int(hz)
user, system = map(float, open(driver).read().split())
print(f"{calls / float(seconds):,.0f} calls/s")
print(f"  echo server     {server:6.2f} s CPU  {1e6 * server / calls:6.1f} us/call")
print(f"  driver          {user + system:6.2f} s CPU  {1e6 * (user + system) / calls:6.1f} us/call (with its start)")
PY
rm -f "$log.out" "$log.driver"
