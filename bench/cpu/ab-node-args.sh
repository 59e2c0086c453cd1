#!/bin/bash
# A/B of two sets of node flags on one machine, alternating: each round runs
# bench/cpu-split.sh (a 1-pair cluster, fsync on) batched then unary, once
# with the nodes given $A and once with $B (which goes first alternates by
# round, so a drift in the machine's load favours neither), and prints one
# line per run: label, shape, increments/s, p50, p99, us of CPU per
# acknowledged increment per process, and the load average at its start.
#   A="--log-writer inline" B="--log-writer thread" bench/cpu/ab-node-args.sh [rounds=3] [seconds=8]
# (The log writer thread was measured this way on its prototype commit, see
# bench/RESULTS.md; this build has no --log-writer flag.)
set -euo pipefail
cd "$(dirname "$0")/.."
: "${A?set A to the first set of node flags (may be empty: A= )}" "${B?set B to the second}"
ROUNDS=${1:-3}
SECONDS_EACH=${2:-8}
batched=(--batch 100 --concurrency 16 --procs 2 --seconds "$SECONDS_EACH")
unary=(--concurrency 64 --seconds "$SECONDS_EACH")
run() {
  local flags=$1 shape=$2
  shift 2
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  NODE_ARGS="$flags" bench/cpu-split.sh "$@" 2>&1 | python3 -c '
import re, sys
label, shape, load = sys.argv[1:4]
text = sys.stdin.read()
rate = re.search(r"^([\d,]+) increments/s, p50 ([\d.]+) ms, p99 ([\d.]+) ms", text, re.M)
us = {who.split()[0]: float(m) for who, m in re.findall(r"^  (load generator|router|primary|follower|all) .* ([\d.]+) us/increment", text, re.M)}
if rate is None: print(label, shape, "FAILED", text[-400:].replace("\n", " | ")); sys.exit()
parts = " ".join(f"{who} {us.get(who, 0):6.1f}" for who in ("load", "router", "primary", "follower", "all"))
print(f"[{label}] {shape:7s} {rate.group(1):>8s}/s p50 {rate.group(2):>6s} p99 {rate.group(3):>6s} ms  us/inc {parts}  loadavg {load}", flush=True)
' "$flags" "$shape" "$load"
}
for round in $(seq 1 "$ROUNDS"); do
  # Alternate which set goes first, so a drift in the machine's load does not favour one.
  if [ $((round % 2)) = 1 ]; then order=("$A" "$B"); else order=("$B" "$A"); fi
  for flags in "${order[@]}"; do run "$flags" batched "${batched[@]}"; done
  for flags in "${order[@]}"; do run "$flags" unary "${unary[@]}"; done
done
