#!/bin/bash
# The floor for a unary call's server-side CPU: a bare grpc-js echo server
# (bench/cpu/grpc-echo.mts) driven at the given concurrency, and its CPU
# microseconds per call, to set beside the router's per unary increment in
# `bench/cpu-split.sh --batch 1` (run them back to back on a quiet machine).
# A rate (calls/s, 0 = as fast as it goes) paces the driver as
# `tally bench --rate` paces Tally, for a comparison at equal rates.
#   bench/cpu/echo-cpu.sh [concurrency=64] [seconds=8] [rate=0]
set -euo pipefail
cd "$(dirname "$0")/.."
concurrency=${1:-64}
seconds=${2:-8}
rate=${3:-0}
log=$(mktemp /tmp/tally-echo-XXXXXX.log)
node --import tsx bench/cpu/grpc-echo.mts serve 0 >"$log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true; wait 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 80); do grep -q ready "$log" && break; sleep 0.25; done
port=$(awk '/ready/ {print $2}' "$log")
# utime and stime of the server, in clock ticks.
ticks() { awk '{print $14, $15}' "/proc/$pid/stat"; }
before=$(ticks)
/usr/bin/time -f "%U %S" -o "$log.driver" node --import tsx bench/cpu/grpc-echo.mts drive "$port" "$concurrency" "$seconds" "$rate" >"$log.out"
after=$(ticks)
python3 - "$log.out" "$log.driver" "$before" "$after" "$(getconf CLK_TCK)" "$rate" <<'PY'
import json, sys
out, driver, before, after, hz, rate = sys.argv[1:]
result = json.load(open(out))
calls = result['calls']
(user0, sys0), (user1, sys1) = map(int, before.split()), map(int, after.split())
server_user, server_sys = (user1 - user0) / int(hz), (sys1 - sys0) / int(hz)
server = server_user + server_sys
user, system = map(float, open(driver).read().split())
run = result['cpuMicros'] / 1e6
paced = f" (paced at {int(rate):,}/s)" if int(rate) > 0 else ""
print(f"{result['callsPerSec']:,} calls/s{paced}, {calls:,} calls")
print(f"  echo server     {server:6.2f} s CPU  {1e6 * server / calls:6.1f} us/call  (user {1e6 * server_user / calls:.1f}, system {1e6 * server_sys / calls:.1f})")
print(f"  driver          {user + system:6.2f} s CPU  {1e6 * (user + system) / calls:6.1f} us/call (with its start); during the calls alone {1e6 * run / calls:.1f} us/call")
json.dump({'callsPerSec': result['callsPerSec'], 'calls': calls, 'serverUs': 1e6 * server / calls, 'serverUserUs': 1e6 * server_user / calls, 'serverSysUs': 1e6 * server_sys / calls, 'driverRunUs': 1e6 * run / calls}, open(out + '.json', 'w'))
print('ECHO_JSON ' + json.dumps({'callsPerSec': result['callsPerSec'], 'serverUs': round(1e6 * server / calls, 1), 'driverRunUs': round(1e6 * run / calls, 1)}))
PY
rm -f "$log.out" "$log.driver" "$log.out.json"
