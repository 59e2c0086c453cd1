#!/bin/bash
# Log writer on a worker thread against inline (issue 16, item 4), A/B
# alternating on one machine: each round runs bench/cpu-split.sh (a 1-pair
# cluster, fsync on) batched then unary, once with `--log-writer inline` and
# once with `--log-writer thread`, and prints one line per run:
#   mode shape increments/s p50 p99 us/increment(load router primary follower all) load-average
#   bench/log-writer.sh [rounds=3] [seconds=8]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECONDS_EACH=${2:-8}
batched=(--batch 100 --concurrency 16 --procs 2 --seconds "$SECONDS_EACH")
unary=(--concurrency 64 --seconds "$SECONDS_EACH")
run() {
  local mode=$1 shape=$2
  shift 2
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  NODE_ARGS="--log-writer $mode" bench/cpu-split.sh "$@" 2>&1 | python3 -c '
import re, sys
mode, shape, load = sys.argv[1:4]
text = sys.stdin.read()
rate = re.search(r"^([\d,]+) increments/s, p50 ([\d.]+) ms, p99 ([\d.]+) ms", text, re.M)
us = {who.split()[0]: float(m) for who, m in re.findall(r"^  (load generator|router|primary|follower|all) .* ([\d.]+) us/increment", text, re.M)}
if rate is None: print(mode, shape, "FAILED", text[-400:].replace("\n", " | ")); sys.exit()
parts = " ".join(f"{who} {us.get(who, 0):6.1f}" for who in ("load", "router", "primary", "follower", "all"))
print(f"{mode:6s} {shape:7s} {rate.group(1):>8s}/s p50 {rate.group(2):>6s} p99 {rate.group(3):>6s} ms  us/inc {parts}  loadavg {load}", flush=True)
' "$mode" "$shape" "$load"
}
for round in $(seq 1 "$ROUNDS"); do
  # Alternate which mode goes first, so a drift in the machine's load does not favour one.
  if [ $((round % 2)) = 1 ]; then order=(inline thread); else order=(thread inline); fi
  for mode in "${order[@]}"; do run "$mode" batched "${batched[@]}"; done
  for mode in "${order[@]}"; do run "$mode" unary "${unary[@]}"; done
done
