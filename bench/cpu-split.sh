#!/bin/bash
# Where the CPU goes per increment: starts a 1-pair cluster (router, primary,
# follower, each with a metrics port), runs `tally bench` with the given
# arguments, and prints each process's CPU seconds and microseconds per
# acknowledged increment, plus the pipeline's shape (items per node call,
# rows per commit, commit time).
#   bench/cpu-split.sh --batch 100 --concurrency 64 --procs 1 --seconds 8
#   bench/cpu-split.sh --workload zipf --counters 1000000 --batch 100 --concurrency 16 --procs 2 --seconds 8
# A workload's population (zipf, page; cold or mix with --prefill) is created
# before the measured window and reported on its own line.
# Set PROFILE=1 to also write V8 CPU profiles (node --cpu-prof) to $OUT/prof.
# NODE_ARGS="--dedup-keys-in-memory-max 100000" passes flags to both nodes;
# PREFILL_KEYS=2000000 starts both nodes on a log already holding that many
# keyed rows (bench/storage/prefill-keys.mts; PREFILL_SCHEMA=4 for a release without
# the key index). The primary's bytes written to disk are printed too.
# DIST=1 runs the router, the nodes and the load generator from dist/ (`npm run
# build` first), as npm start and the Docker image do: without tsx, whose
# keepNames helper names every closure as it is created.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d /tmp/tally-cpu-split-XXXXXX)}
mkdir -p "$OUT/data"
PROF=()
# The processes' entry points: TypeScript under tsx, or the build that ships.
if [ "${DIST:-0}" = 1 ]; then
  [ -f dist/node/main.js ] || { echo "DIST=1: run npm run build first" >&2; exit 2; }
  NODE_MAIN=(dist/node/main.js); ROUTER_MAIN=(dist/router/main.js); CLI=(dist/cli/cli.js)
else
  NODE_MAIN=(--import tsx src/node/main.ts); ROUTER_MAIN=(--import tsx src/router/main.ts); CLI=(--import tsx src/cli/cli.ts)
fi
if [ "${PROFILE:-0}" = 1 ]; then PROF=(--cpu-prof "--cpu-prof-dir=$OUT/prof"); fi
port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
R=$(port); P=$(port); F=$(port); RM=$(port); PM=$(port); FM=$(port)
pids=()
cleanup() { kill -TERM "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap cleanup EXIT
read -r -a EXTRA <<<"${NODE_ARGS:-}"
if [ -n "${PREFILL_KEYS:-}" ]; then
  node --import tsx bench/storage/prefill-keys.mts "$OUT/data/primary" --keys "$PREFILL_KEYS" --schema "${PREFILL_SCHEMA:-5}" >/dev/null
  cp -r "$OUT/data/primary" "$OUT/data/follower"
fi
node "${PROF[@]}" "${NODE_MAIN[@]}" --listen 127.0.0.1:$P --data-dir "$OUT/data/primary" --metrics-port $PM --node-name primary "${EXTRA[@]}" >"$OUT/primary.log" 2>&1 & pids+=($!)
PRIMARY_PID=$!
node "${PROF[@]}" "${NODE_MAIN[@]}" --listen 127.0.0.1:$F --data-dir "$OUT/data/follower" --metrics-port $FM --node-name follower "${EXTRA[@]}" >"$OUT/follower.log" 2>&1 & pids+=($!)
node "${PROF[@]}" "${ROUTER_MAIN[@]}" --listen 127.0.0.1:$R --pairs 127.0.0.1:$P,127.0.0.1:$F --data-dir "$OUT/data/router" --metrics-port $RM >"$OUT/router.log" 2>&1 & pids+=($!)
for _ in $(seq 1 120); do node "${CLI[@]}" health --router 127.0.0.1:$R >/dev/null 2>&1 && break; sleep 0.5; done
sleep 3 # the pair goes in sync
# Counters the workload creates first (zipf and page; cold and mix with
# --prefill) are created before the measured window: creation is its own line.
# Arguments may hold several runs separated by --then, measured one after the
# other on the same cluster and population (compare.sh: zipf, then page reads).
RUN_ID=cpusplit$$
runs=()
current=()
for arg in "$@"; do
  if [ "$arg" = --then ]; then runs+=("${current[*]}"); current=(); else current+=("$arg"); fi
done
runs+=("${current[*]}")
read -r -a FIRST <<<"${runs[0]}"
node "${CLI[@]}" bench --router 127.0.0.1:$R "${FIRST[@]}" --run-id $RUN_ID --prefill-only --json >"$OUT/creation.json" 2>"$OUT/creation.err"
sleep 2 # the follower catches up on the creation
scrape() { for p in $RM $PM $FM; do curl -s localhost:$p/metrics; done > "$OUT/metrics.$1.txt"; }
written() { awk '/^write_bytes:/ {print $2}' "/proc/$PRIMARY_PID/io"; }
for n in "${!runs[@]}"; do
  read -r -a ARGS <<<"${runs[$n]}"
  RUN_ARGS=()
  for arg in "${ARGS[@]}"; do [ "$arg" = --prefill ] || RUN_ARGS+=("$arg"); done
  # The bench hands over at the run's edges (--phase-file): the window below
  # holds the run alone, not the check's baseline and final reads.
  PHASE="$OUT/phase.$n"
  : >"$PHASE"
  /usr/bin/time -f "%U %S" -o "$OUT/client.time.$n" node "${CLI[@]}" bench --router 127.0.0.1:$R "${RUN_ARGS[@]}" --run-id $RUN_ID --no-prefill --phase-file "$PHASE" --json >"$OUT/bench.$n.json" 2>"$OUT/bench.$n.err" &
  BENCH_PID=$!
  await_phase() { while [ "$(cat "$PHASE")" != "$1" ] && kill -0 $BENCH_PID 2>/dev/null; do sleep 0.02; done; }
  await_phase ready
  scrape before.$n
  written >"$OUT/written.before.$n"
  echo run >"$PHASE"
  await_phase done
  written >"$OUT/written.after.$n"
  scrape after.$n
  echo check >"$PHASE"
  wait $BENCH_PID
  python3 - "$OUT" "$n" "${runs[$n]}" <<'PY'
import json, sys
out, n, args = sys.argv[1], sys.argv[2], sys.argv[3]
bench = json.load(open(f'{out}/bench.{n}.json'))
if n == '0':
    creation = json.load(open(f'{out}/creation.json')).get('creation')
    if creation:
        print(f"created {creation['counters']:,} counters first in {creation['durationMs'] / 1000:.1f} s ({creation['countersPerSec']:,}/s), not measured below")
def metrics(which):
    values = {}
    for line in open(f'{out}/metrics.{which}.{n}.txt'):
        if line.startswith('#') or not line.strip(): continue
        name, value = line.rsplit(' ', 1)
        values[name] = values.get(name, 0) + float(value)
    return values
before, after = metrics('before'), metrics('after')
delta = lambda name: after.get(name, 0) - before.get(name, 0)
page = bench['workload'] == 'page'
# The unit CPU is divided by: an acknowledged increment, or a page (one ReadMany call).
units = bench['calls'] if page else bench['okIncrements']
unit = 'page' if page else 'increment'
user, system = map(float, open(f'{out}/client.time.{n}').read().split())
check = bench.get('check')
checked = 'skipped' if check is None else 'passed' if check['passed'] else 'FAILED'
print(f"[{args}]")
if page:
    print(f"{bench['callsPerSec']:,} pages/s ({bench['countersReadPerSec']:,} counters read/s), p50 {bench['latencyMs']['p50']:.2f} ms, p99 {bench['latencyMs']['p99']:.2f} ms, {units:,} pages, check {checked}")
else:
    print(f"{bench['incrementsPerSec']:,} increments/s, p50 {bench['latencyMs']['p50']:.1f} ms, p99 {bench['latencyMs']['p99']:.1f} ms, {units:,} acknowledged, check {checked}")
# prom-client's process CPU, under the tally_ prefix of older releases or its stock name.
cpu = lambda label: delta(f'tally_process_cpu_seconds_total{{{label}}}') + delta(f'process_cpu_seconds_total{{{label}}}')
rows = [('load generator', user + system)]
rows += [(who, cpu(label)) for who, label in (('router', 'process="router"'), ('primary', 'process="node",node="primary"'), ('follower', 'process="node",node="follower"'))]
total = sum(seconds for _, seconds in rows)
for who, seconds in rows: print(f"  {who:15s} {seconds:6.2f} s CPU  {1e6 * seconds / units:6.1f} us/{unit}  {100 * seconds / total:4.0f}%")
print(f"  {'all':15s} {total:6.2f} s CPU  {1e6 * total / units:6.1f} us/{unit}")
run_cpu = bench['loadGeneratorCpuSeconds']
print(f"  load generator during the run alone (no start, no check): {run_cpu:.2f} s, {1e6 * run_cpu / units:.1f} us/{unit}; all processes so: {1e6 * (total - user - system + run_cpu) / units:.1f} us/{unit}")
print("  (router, primary and follower: the run alone; load generator: the whole process, its start and the check's reads included)")
router = 'process="router"'
calls = delta(f'tally_router_node_call_items_count{{{router}}}')
print(f"  items per router->node call {delta(f'tally_router_node_call_items_sum{{{router}}}') / max(1, calls):.0f}")
for who in ('primary', 'follower'):
    label = f'process="node",node="{who}"'
    commits = delta(f'tally_log_commit_batch_rows_count{{{label}}}')
    print(f"  {who}: {commits:.0f} commits, {delta(f'tally_log_commit_batch_rows_sum{{{label}}}') / max(1, commits):.0f} rows each, {1000 * delta(f'tally_log_fsync_seconds_sum{{{label}}}') / max(1, commits):.1f} ms each")
primary = 'process="node",node="primary"'
written = int(open(f'{out}/written.after.{n}').read()) - int(open(f'{out}/written.before.{n}').read())
print(f"  primary: {written / max(1, units):.0f} bytes written to disk per {unit}, {delta(f'tally_dedup_disk_lookups_total{{{primary}}}') / max(1, units):.2f} key lookups on disk per {unit}")
json.dump({'bench': bench, 'cpuSeconds': dict(rows), 'loadGeneratorRunCpuSeconds': run_cpu, 'units': units}, open(f'{out}/split.{n}.json', 'w'))
PY
done
echo "output in $OUT"
