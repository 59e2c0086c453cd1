#!/usr/bin/env bash
# One machine, one run: Tally against what a user would pick instead, with
# durability on everywhere (Tally: fsync on primary and follower before the
# acknowledgement; Redis: appendonly, appendfsync always; PostgreSQL: fsync=on,
# synchronous_commit=on). Two sections, each printed as one table:
#   hot       one hot counter at the same concurrency: Tally unary, batched and
#             coalesced; a bare grpc-js echo (the floor for unary); Redis
#             INCRBY (redis-benchmark); a PostgreSQL hot-row UPDATE (pgbench).
#   platform  the platform's workload: Zipf(s) over COUNTERS counters, created
#             first (creation reported apart), batches of BATCH, the same keys
#             and seeded draws everywhere (bench/compare-load.mts shares tally
#             bench's sampler), 16 in flight x 2 processes for every system:
#             - Tally on a 1-pair cluster (bench/cpu-split.sh);
#             - Redis INCRBY unpipelined, and pipelined BATCH per round trip;
#             - Redis with a replica: a second pair of redis-server processes
#               on loopback, a primary and a `replicaof` replica, both
#               appendonly + appendfsync always, each in its own dir and port;
#               BATCH pipelined INCRBY then `WAIT 1 0` in one round trip (what a
#               user must run to get Tally's acknowledgement, on both machines
#               of a pair, from Redis); CPU over both redis processes;
#             - PostgreSQL batched upserts;
#             - latency under load: the same Zipf load paced at PACED_PERCENT
#               (default 50) % of the Tally row's increments/s, or at PACED_RATE
#               increments/s, p50/p99 timed from when each batch was due: Tally
#               (tally bench --rate on a fresh 1-pair cluster, its population
#               created again, as cpu-split.sh takes its runs up front), Redis
#               with a replica + WAIT, PostgreSQL upserts (compare-load --rate);
#             - reads for a page: PAGE_SIZE cold counters per call at PAGE_RATE
#               pages/s (Tally ReadMany, Redis MGET, PostgreSQL SELECT ... =
#               ANY), p50/p99 timed from when each call was due.
#             CPU is per increment (per page), over all processes: servers and
#             the load generator during the run. Printed after the table: Tally
#             against each alternative (Redis with a replica and WAIT among
#             them) and the paced p50/p99 side by side.
#   page      reads for a page alone (issue 27 item 7): the population created,
#             then PAGE_SIZE cold counters per call at PAGE_RATE pages/s, 32 in
#             flight x PAGE_PROCS processes: Tally ReadMany on a 1-pair cluster
#             (bench/cpu-split.sh, per-process CPU), Redis MGET of the same
#             keys, PostgreSQL SELECT ... = ANY; pages/s, p50 and p99 side by side.
#   bench/compare.sh [seconds=10] [concurrency=64]
#   SECTIONS=platform COUNTERS=1000000 ZIPF_S=0.99 BATCH=100 PAGE_RATE=2000 bench/compare.sh 8
#   SECTIONS=page COUNTERS=100000 PAGE_RATE=2000 PAGE_PROCS=1 bench/compare.sh 8
#   PAGE_STREAM=0 ...: Tally's pages as unary ReadMany calls (default: on a ReadStream)
#   SECTIONS=platform PACED_RATE=20000 bench/compare.sh 8   (a fixed paced rate)
#   SECTIONS=platform PACED_PERCENT=0 bench/compare.sh 8    (no latency-under-load rows)
# Redis 7.0 has no WAITAOF: WAIT 1 0 answers once the replica acknowledged the
# batch's replication offset (it writes and fsyncs its AOF before it sends
# acknowledgements); on Redis >= 7.2 `WAITAOF 1 1 0` would state that fsync.
# Needs: redis-server + redis-benchmark + redis-cli, PostgreSQL binaries (initdb, pg_ctl,
# pgbench) from Debian's packages (installed if missing and root); each is
# skipped with a note when absent. Stops everything it started. Prints the
# tables; copy them into bench/RESULTS.md with the machine's state.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-10}"
concurrency="${2:-64}"
sections="${SECTIONS:-hot platform}"
counters="${COUNTERS:-1000000}"
zipf_s="${ZIPF_S:-0.99}"
batch="${BATCH:-100}"
seed="${SEED:-1}"
page_rate="${PAGE_RATE:-2000}"
page_size="${PAGE_SIZE:-50}"
page_procs="${PAGE_PROCS:-2}"
# Tally's pages on one ReadStream per load process (the client's way for overlapping readMany calls); PAGE_STREAM=0: unary ReadMany calls.
page_stream=()
page_how="ReadMany"
[ "${PAGE_STREAM:-1}" = 0 ] || { page_stream=(--stream); page_how="ReadMany pages on a ReadStream"; }
paced_percent="${PACED_PERCENT:-50}"
paced_rate_fixed="${PACED_RATE:-}"
work="$(mktemp -d /tmp/tally-compare-XXXXXX)"
pids=()
cleanup() {
  for pid in "${pids[@]:-}"; do [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; done
  if [ -n "${pgbin:-}" ] && [ -d "$work/pg" ]; then runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true; fi
  sleep 1
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
json_field() { node -e "let d='';process.stdin.on('data',c=>d+=c).on('end',()=>console.log(JSON.parse(d)['$1']))"; }
has() { [[ " $sections " == *" $1 "* ]]; }

if [ "$(id -u)" = 0 ] && { ! command -v redis-server >/dev/null || ! ls /usr/lib/postgresql/*/bin/pgbench >/dev/null 2>&1; }; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server redis-tools postgresql >/dev/null 2>&1 || true
fi

declare -A result
notes=()
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
ratio() { node -e "const a=Number('$1'),b=Number('$2');console.log(a&&b?(a/b).toFixed(2)+'x':'n/a')"; }

# Redis, appendonly with appendfsync always: one server for both sections.
redis_pid=""
if command -v redis-server >/dev/null; then
  redis_port="$(free_port)"
  mkdir -p "$work/redis"
  redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$work/redis" --appendonly yes --appendfsync always --save "" --daemonize no > "$work/redis.log" 2>&1 &
  redis_pid=$!
  pids+=($redis_pid)
  sleep 1
else
  notes+=("redis: not installed")
fi

# Redis with a replica (platform section): a second primary and a replicaof
# replica, both appendonly with appendfsync always, each in its own dir and port.
rr_pid=""
if has platform && command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then
  rr_port="$(free_port)"
  mkdir -p "$work/redis-primary" "$work/redis-replica"
  redis-server --port "$rr_port" --bind 127.0.0.1 --dir "$work/redis-primary" --appendonly yes --appendfsync always --save "" --repl-diskless-sync-delay 0 --daemonize no > "$work/redis-primary.log" 2>&1 &
  rr_primary_pid=$!
  pids+=($rr_primary_pid)
  for _ in $(seq 1 40); do redis-cli -p "$rr_port" ping >/dev/null 2>&1 && break; sleep 0.25; done
  rr_replica_port="$(free_port)"
  redis-server --port "$rr_replica_port" --bind 127.0.0.1 --dir "$work/redis-replica" --appendonly yes --appendfsync always --save "" --replicaof 127.0.0.1 "$rr_port" --daemonize no > "$work/redis-replica.log" 2>&1 &
  rr_replica_pid=$!
  pids+=($rr_replica_pid)
  for _ in $(seq 1 120); do
    redis-cli -p "$rr_replica_port" info replication 2>/dev/null | grep -q 'master_link_status:up' && { rr_pid="$rr_primary_pid"; break; }
    sleep 0.25
  done
  [ -n "$rr_pid" ] || notes+=("redis with a replica: the replica did not come in sync in 30 s, see $work/redis-replica.log")
elif has platform; then
  notes+=("redis with a replica: redis-server or redis-cli not installed")
fi

# PostgreSQL, fsync=on, synchronous_commit=on: one server for both sections.
pgbin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | tail -1 || true)"
pg_pid=""
if [ -n "$pgbin" ] && [ -x "$pgbin/pgbench" ] && id postgres >/dev/null 2>&1; then
  pg_port="$(free_port)"
  mkdir -p "$work/pg" && chown postgres "$work" "$work/pg"
  runuser -u postgres -- "$pgbin/initdb" -D "$work/pg" -A trust >/dev/null
  runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/pg" -o "-p $pg_port -k $work -c fsync=on -c synchronous_commit=on -c max_connections=200" -l "$work/pg.log" start >/dev/null
  pg_pid="$(head -1 "$work/pg/postmaster.pid")"
  pg_url="postgresql://postgres@127.0.0.1:$pg_port/postgres"
else
  notes+=("postgres: not installed (or no postgres user)")
fi

# Shared by the platform and page sections.
run_id="compare$$"
draws=(--counters "$counters" --seed "$seed")
# One row: system, mode, rate text, p50, p99, CPU us per unit (all), creation text.
row() { rows+=("| $1 | $2 | $3 | $4 | $5 | $6 | $7 |"); }
# Fields of compare-load's JSON: rate (items or calls per second), p50, p99, CPU per unit, check.
load_row() {
  node -e "
    const r = JSON.parse(require('fs').readFileSync(0, 'utf8'));
    const page = r.mode === 'page';
    const units = page ? r.calls : r.items;
    const cpu = r.loadGeneratorCpuSeconds + (r.serverCpuSeconds ?? 0);
    const rate = page ? r.callsPerSec.toLocaleString('en-US') + ' pages/s' : r.itemsPerSec.toLocaleString('en-US') + '/s';
    const us = (s) => (1e6 * s / units).toFixed(1);
    const check = r.check ? (r.check.passed ? ', check passed' : ', CHECK FAILED') : '';
    console.log([rate, r.latencyMs.p50.toFixed(2) + ' ms', r.latencyMs.p99.toFixed(2) + ' ms', us(cpu) + ' (server ' + us(r.serverCpuSeconds ?? 0) + ', client ' + us(r.loadGeneratorCpuSeconds) + ')' + check, page ? r.callsPerSec : r.itemsPerSec].join('\t'));
  "
}

# Tally's rows from a bench/cpu-split.sh output dir, one line per run (split.N.json):
# rate text, p50, p99, CPU text, rate, creation text.
tally_split_rows() {
  python3 - "$1" <<'PY'
import json, os, sys
out = sys.argv[1]
creation = json.load(open(f'{out}/creation.json')).get('creation') or {}
n = 0
while os.path.exists(f'{out}/split.{n}.json'):
    s = json.load(open(f'{out}/split.{n}.json'))
    n += 1
    b, cpu = s['bench'], s['cpuSeconds']
    servers = cpu['router'] + cpu['primary'] + cpu['follower']
    client = s['loadGeneratorRunCpuSeconds']
    us = lambda seconds: f"{1e6 * seconds / s['units']:.1f}"
    page = b['workload'] == 'page'
    rate = f"{b['callsPerSec']:,} pages/s" if page else f"{b['incrementsPerSec']:,}/s"
    check = ', check passed' if (b.get('check') or {}).get('passed') else ', CHECK FAILED' if b.get('check') else ''
    print('\t'.join([rate, f"{b['latencyMs']['p50']:.2f} ms", f"{b['latencyMs']['p99']:.2f} ms", f"{us(servers + client)} (servers {us(servers)}, client {us(client)}){check}", str(b['callsPerSec'] if page else b['incrementsPerSec']), f"{creation.get('counters', 0):,} in {creation.get('durationMs', 0) / 1000:.1f} s"]))
PY
}
load() { node --import tsx bench/compare-load.mts "$@" --run-id "$run_id" "${draws[@]}" --json 2>>"$work/load.err"; }

if has hot; then
  # Tally: a local cluster (2 pairs, replication in sync, fsync on every commit).
  tally_port="$(free_port)"
  node_base="$(( 30000 + RANDOM % 20000 ))"
  node --import tsx src/cluster/main.ts --port "$tally_port" --node-base-port "$node_base" --metrics-port 0 --data-dir "$work/tally" > "$work/tally.log" 2>&1 &
  cluster_pid=$!
  pids+=($cluster_pid)
  for _ in $(seq 1 60); do grep -q "Tally local cluster ready" "$work/tally.log" && break; sleep 0.5; done
  bench() { node --import tsx src/cli/cli.ts bench --router "127.0.0.1:$tally_port" --seconds "$seconds" --json "$@" 2>/dev/null; }
  result[tally_unary]="$(bench --concurrency "$concurrency" | json_field incrementsPerSec)"
  result[tally_batch]="$(bench --concurrency 16 --batch 100 --procs 2 | json_field incrementsPerSec)"
  result[tally_coalesced]="$(bench --concurrency "$concurrency" --coalesce | json_field incrementsPerSec)"
  kill "$cluster_pid" 2>/dev/null || true
  wait "$cluster_pid" 2>/dev/null || true

  # The floor: a bare grpc-js unary echo.
  echo_port="$(free_port)"
  node --import tsx bench/cpu/grpc-echo.mts serve "$echo_port" > "$work/echo.log" 2>&1 &
  echo_pid=$!
  pids+=($echo_pid)
  for _ in $(seq 1 40); do grep -q ready "$work/echo.log" && break; sleep 0.25; done
  result[grpc_echo]="$(node --import tsx bench/cpu/grpc-echo.mts drive "$echo_port" "$concurrency" "$seconds" | json_field callsPerSec)"
  kill "$echo_pid" 2>/dev/null || true

  if [ -n "$redis_pid" ] && command -v redis-benchmark >/dev/null; then
    requests=$(( 20000 * seconds ))
    result[redis]="$(redis-benchmark -p "$redis_port" -c "$concurrency" -n "$requests" -q INCRBY hot 1 2>/dev/null | tr '\r' '\n' | grep -Eo '[0-9.]+ requests per second' | tail -1 | cut -d' ' -f1)"
  fi
  if [ -n "$pg_pid" ]; then
    runuser -u postgres -- "$pgbin/psql" -h "$work" -p "$pg_port" -d postgres -qc "CREATE TABLE hot (id int PRIMARY KEY, total bigint NOT NULL); INSERT INTO hot VALUES (1, 0);"
    echo "UPDATE hot SET total = total + 1 WHERE id = 1;" > "$work/hot.sql"
    chown postgres "$work/hot.sql"
    result[postgres]="$(runuser -u postgres -- "$pgbin/pgbench" -h "$work" -p "$pg_port" -n -c "$concurrency" -j 2 -T "$seconds" -f "$work/hot.sql" postgres 2>/dev/null | grep -Eo 'tps = [0-9.]+' | tail -1 | cut -d' ' -f3)"
  fi

  cat <<TABLE
### One hot counter — $(date -u +%Y-%m-%d), commit $commit, $(nproc) cores, ${seconds} s per system, concurrency $concurrency

Command: \`SECTIONS=hot bench/compare.sh $seconds $concurrency\`. Everything durable: Tally
acknowledges after fsync on primary and follower; Redis appendfsync always;
PostgreSQL fsync=on, synchronous_commit=on.

| system | load | per second | Tally unary vs it |
|---|---|---|---|
| bare grpc-js unary echo (the floor) | $concurrency in flight | ${result[grpc_echo]:-n/a} calls | $(ratio "${result[tally_unary]:-0}" "${result[grpc_echo]:-0}") |
| Redis INCRBY one key, appendfsync always | $concurrency clients | ${result[redis]:-n/a} increments | $(ratio "${result[tally_unary]:-0}" "${result[redis]:-0}") |
| PostgreSQL hot-row UPDATE | $concurrency clients | ${result[postgres]:-n/a} increments | $(ratio "${result[tally_unary]:-0}" "${result[postgres]:-0}") |
| Tally unary Increment, one hot counter | $concurrency in flight | ${result[tally_unary]:-n/a} increments | 1.00x |
| Tally IncrementBatch of 100, one hot counter | 16 in flight x 2 processes | ${result[tally_batch]:-n/a} increments | |
| Tally coalescing client, $concurrency concurrent increment calls | $concurrency callers, one process | ${result[tally_coalesced]:-n/a} increments | |

TABLE
fi

if has platform; then
  zipf_load=(--batch "$batch" --concurrency 16 --procs 2 --seconds "$seconds")
  page_load=(--rate "$page_rate" --page-size "$page_size" --concurrency 32 --procs "$page_procs" --seconds "$seconds")
  rows=()
  # Tally: a 1-pair cluster (router, primary, follower; fsync on both before the acknowledgement).
  OUT="$work/tally-split" bash bench/cpu-split.sh --workload zipf "${draws[@]}" --zipf-s "$zipf_s" "${zipf_load[@]}" \
    --then --workload page "${draws[@]}" "${page_load[@]}" "${page_stream[@]}" > "$work/tally-split.txt" 2>&1 || notes+=("tally: cpu-split.sh failed, see its output")
  tally_rows="$(tally_split_rows "$work/tally-split")" || tally_rows=""
  if [ -n "$tally_rows" ]; then
    IFS=$'\t' read -r t_rate t_p50 t_p99 t_cpu t_zipf t_created <<<"$(sed -n 1p <<<"$tally_rows")"
    IFS=$'\t' read -r tp_rate tp_p50 tp_p99 tp_cpu t_pages _ <<<"$(sed -n 2p <<<"$tally_rows")"
    row "Tally" "IncrementBatch of $batch, 16 in flight x 2 processes" "$t_rate" "$t_p50" "$t_p99" "$t_cpu" "$t_created"
  fi

  if [ -n "$redis_pid" ]; then
    created="$(load redis create --target "127.0.0.1:$redis_port" | node -e "const c=JSON.parse(require('fs').readFileSync(0,'utf8')).creation;console.log(c.counters.toLocaleString('en-US')+' in '+(c.durationMs/1000).toFixed(1)+' s')")"
    IFS=$'\t' read -r rate p50 p99 cpu r_unpiped <<<"$(load redis increment --target "127.0.0.1:$redis_port" --workload zipf --zipf-s "$zipf_s" --batch 1 --concurrency 16 --procs 2 --seconds "$seconds" --server-pid "$redis_pid" | load_row)"
    row "Redis" "INCRBY unpipelined, 16 connections x 2 processes" "$rate" "$p50" "$p99" "$cpu" "$created (MSET)"
    IFS=$'\t' read -r rate p50 p99 cpu r_piped <<<"$(load redis increment --target "127.0.0.1:$redis_port" --workload zipf --zipf-s "$zipf_s" --pipeline "${zipf_load[@]}" --server-pid "$redis_pid" | load_row)"
    row "Redis" "INCRBY pipelined $batch per round trip, 16 connections x 2 processes" "$rate" "$p50" "$p99" "$cpu" ""
  fi
  if [ -n "$rr_pid" ]; then
    # The replica receives the population through replication; WAIT holds each batch until it has it.
    created="$(load redis create --target "127.0.0.1:$rr_port" | node -e "const c=JSON.parse(require('fs').readFileSync(0,'utf8')).creation;console.log(c.counters.toLocaleString('en-US')+' in '+(c.durationMs/1000).toFixed(1)+' s')")"
    IFS=$'\t' read -r rate p50 p99 cpu r_wait <<<"$(load redis increment --target "127.0.0.1:$rr_port" --workload zipf --zipf-s "$zipf_s" --pipeline --wait 1 "${zipf_load[@]}" --server-pid "$rr_primary_pid,$rr_replica_pid" | load_row)"
    row "Redis with a replica" "INCRBY pipelined $batch + WAIT 1 0 per round trip, 16 connections x 2 processes" "$rate" "$p50" "$p99" "$cpu" "$created (MSET, replicated)"
  fi
  if [ -n "$pg_pid" ]; then
    created="$(load postgres create --target "$pg_url" | node -e "const c=JSON.parse(require('fs').readFileSync(0,'utf8')).creation;console.log(c.counters.toLocaleString('en-US')+' in '+(c.durationMs/1000).toFixed(1)+' s')")"
    IFS=$'\t' read -r rate p50 p99 cpu p_upsert <<<"$(load postgres increment --target "$pg_url" --workload zipf --zipf-s "$zipf_s" "${zipf_load[@]}" --server-pid "$pg_pid" | load_row)"
    row "PostgreSQL" "upsert of $batch per statement (summed, sorted), 16 connections x 2 processes" "$rate" "$p50" "$p99" "$cpu" "$created (INSERT)"
  fi

  # Latency under load: the same Zipf load paced at PACED_PERCENT of Tally's increments/s above (or PACED_RATE).
  paced_rate=""
  if [ -n "$paced_rate_fixed" ]; then
    paced_rate="$paced_rate_fixed"
    paced_what="PACED_RATE"
  elif [ "$paced_percent" != 0 ] && [ -n "${t_zipf:-}" ]; then
    paced_rate="$(node -e "console.log(Math.round(Number('$t_zipf') * Number('$paced_percent') / 100))")"
    paced_what="$paced_percent% of Tally's maximum above"
  elif [ "$paced_percent" != 0 ]; then
    notes+=("latency under load: no Tally Zipf rate to pace at $paced_percent% of (set PACED_RATE)")
  fi
  if [ -n "$paced_rate" ] && [ "$paced_rate" -gt 0 ]; then
    paced_text="$(node -e "console.log(Number('$paced_rate').toLocaleString('en-US'))") increments/s"
    # Tally: a fresh 1-pair cluster (cpu-split.sh takes its runs up front), the population created again first.
    OUT="$work/tally-paced" bash bench/cpu-split.sh --workload zipf "${draws[@]}" --zipf-s "$zipf_s" "${zipf_load[@]}" --rate "$paced_rate" \
      > "$work/tally-paced.txt" 2>&1 || notes+=("tally: cpu-split.sh failed for the paced run")
    tally_paced="$(tally_split_rows "$work/tally-paced")" || tally_paced=""
    if [ -n "$tally_paced" ]; then
      IFS=$'\t' read -r rate t_paced_p50 t_paced_p99 cpu _ _ <<<"$(sed -n 1p <<<"$tally_paced")"
      row "Tally" "IncrementBatch of $batch paced at $paced_text ($paced_what), 16 x 2" "$rate" "$t_paced_p50" "$t_paced_p99" "$cpu" ""
    fi
    if [ -n "$rr_pid" ]; then
      IFS=$'\t' read -r rate r_paced_p50 r_paced_p99 cpu _ <<<"$(load redis increment --target "127.0.0.1:$rr_port" --workload zipf --zipf-s "$zipf_s" --pipeline --wait 1 "${zipf_load[@]}" --rate "$paced_rate" --server-pid "$rr_primary_pid,$rr_replica_pid" | load_row)"
      row "Redis with a replica" "INCRBY pipelined $batch + WAIT 1 0 paced at $paced_text, 16 x 2" "$rate" "$r_paced_p50" "$r_paced_p99" "$cpu" ""
    fi
    if [ -n "$pg_pid" ]; then
      IFS=$'\t' read -r rate p_paced_p50 p_paced_p99 cpu _ <<<"$(load postgres increment --target "$pg_url" --workload zipf --zipf-s "$zipf_s" "${zipf_load[@]}" --rate "$paced_rate" --server-pid "$pg_pid" | load_row)"
      row "PostgreSQL" "upsert of $batch per statement paced at $paced_text, 16 x 2" "$rate" "$p_paced_p50" "$p_paced_p99" "$cpu" ""
    fi
  fi
  [ -n "${tp_rate:-}" ] && row "Tally" "$page_how of $page_size cold counters at $page_rate pages/s, 32 x $page_procs" "$tp_rate" "$tp_p50" "$tp_p99" "$tp_cpu" ""
  if [ -n "$redis_pid" ]; then
    IFS=$'\t' read -r rate p50 p99 cpu _ <<<"$(load redis page --target "127.0.0.1:$redis_port" "${page_load[@]}" --server-pid "$redis_pid" | load_row)"
    row "Redis" "MGET of $page_size at $page_rate pages/s, 32 x $page_procs" "$rate" "$p50" "$p99" "$cpu" ""
  fi
  if [ -n "$pg_pid" ]; then
    IFS=$'\t' read -r rate p50 p99 cpu _ <<<"$(load postgres page --target "$pg_url" "${page_load[@]}" --server-pid "$pg_pid" | load_row)"
    row "PostgreSQL" "SELECT of $page_size (= ANY) at $page_rate pages/s, 32 x $page_procs" "$rate" "$p50" "$p99" "$cpu" ""
  fi

  cat <<TABLE
### The platform's workload: Zipf(s = $zipf_s) over $(printf "%'d" "$counters") counters, and reads for a page — $(date -u +%Y-%m-%d), commit $commit, $(nproc) cores, ${seconds} s per run

Command: \`SECTIONS=platform COUNTERS=$counters ZIPF_S=$zipf_s BATCH=$batch PAGE_RATE=$page_rate PAGE_SIZE=$page_size PACED_PERCENT=$paced_percent${paced_rate_fixed:+ PACED_RATE=$paced_rate_fixed} bench/compare.sh $seconds\`.
The same counter names, seed ($seed) and Zipf sampler for every system; each
population created before its runs (not in the figures). Durable everywhere:
Tally fsyncs on primary and follower; Redis appendfsync always (with a
replica: on both, each batch followed by WAIT 1 0 in its round trip);
PostgreSQL fsync=on, synchronous_commit=on. Latency per call (a batch, a
page), paced runs timed from when each call was due. CPU: microseconds per
increment (per page) over the servers (Redis with a replica: both processes)
and the load generator during the run.

| system | mode | rate | p50 | p99 | CPU µs per increment or page | creation |
|---|---|---:|---:|---:|---|---|
$(printf '%s\n' "${rows[@]}")

Tally zipf vs Redis unpipelined $(ratio "${t_zipf:-0}" "${r_unpiped:-0}"), vs Redis pipelined $(ratio "${t_zipf:-0}" "${r_piped:-0}"), vs Redis with a replica and WAIT $(ratio "${t_zipf:-0}" "${r_wait:-0}"), vs PostgreSQL upserts $(ratio "${t_zipf:-0}" "${p_upsert:-0}").
Latency under load, paced at ${paced_text:-n/a}: p50 / p99 Tally ${t_paced_p50:-n/a} / ${t_paced_p99:-n/a}, Redis with a replica + WAIT ${r_paced_p50:-n/a} / ${r_paced_p99:-n/a}, PostgreSQL ${p_paced_p50:-n/a} / ${p_paced_p99:-n/a}.
TABLE
  echo
  echo "Tally's per-process split:"
  grep -v '^output in' "$work/tally-split.txt" || true
  [ -f "$work/tally-paced.txt" ] && grep -v '^output in' "$work/tally-paced.txt" || true
fi

if has page; then
  rows=()
  page_load=(--rate "$page_rate" --page-size "$page_size" --concurrency 32 --procs "$page_procs" --seconds "$seconds")
  # Tally: a 1-pair cluster (router, primary, follower), the population created before the measured window.
  OUT="$work/tally-page" bash bench/cpu-split.sh --workload page "${draws[@]}" "${page_load[@]}" "${page_stream[@]}" > "$work/tally-page.txt" 2>&1 || notes+=("tally: cpu-split.sh failed, see its output")
  tally_page="$(python3 - "$work/tally-page" <<'PY'
import json, sys
out = sys.argv[1]
s = json.load(open(f'{out}/split.0.json'))
b, cpu = s['bench'], s['cpuSeconds']
servers = cpu['router'] + cpu['primary'] + cpu['follower']
client = s['loadGeneratorRunCpuSeconds']
us = lambda seconds: f"{1e6 * seconds / s['units']:.1f}"
check = ', check passed' if (b.get('check') or {}).get('passed') else ', CHECK FAILED' if b.get('check') else ''
print('\t'.join([f"{b['callsPerSec']:,} pages/s", f"{b['latencyMs']['p50']:.2f} ms", f"{b['latencyMs']['p99']:.2f} ms", f"{us(servers + client)} (router {us(cpu['router'])}, primary {us(cpu['primary'])}, client {us(client)}){check}", str(b['callsPerSec'])]))
PY
)" || tally_page=""
  if [ -n "$tally_page" ]; then
    IFS=$'\t' read -r rate p50 p99 cpu t_pages <<<"$tally_page"
    row "Tally" "$page_how of $page_size cold counters, 32 x $page_procs" "$rate" "$p50" "$p99" "$cpu" ""
  fi
  if [ -n "$redis_pid" ]; then
    load redis create --target "127.0.0.1:$redis_port" >/dev/null
    IFS=$'\t' read -r rate p50 p99 cpu r_pages <<<"$(load redis page --target "127.0.0.1:$redis_port" "${page_load[@]}" --server-pid "$redis_pid" | load_row)"
    row "Redis" "MGET of $page_size, 32 x $page_procs" "$rate" "$p50" "$p99" "$cpu" ""
  fi
  if [ -n "$pg_pid" ] && [ "${PAGE_POSTGRES:-1}" = 1 ]; then
    load postgres create --target "$pg_url" >/dev/null
    IFS=$'\t' read -r rate p50 p99 cpu _ <<<"$(load postgres page --target "$pg_url" "${page_load[@]}" --server-pid "$pg_pid" | load_row)"
    row "PostgreSQL" "SELECT of $page_size (= ANY), 32 x $page_procs" "$rate" "$p50" "$p99" "$cpu" ""
  fi

  cat <<TABLE
### Reads for a page: $page_size cold counters of $(printf "%'d" "$counters") at $page_rate pages/s — $(date -u +%Y-%m-%d), commit $commit, $(nproc) cores, ${seconds} s per run, load $(cut -d' ' -f1-3 /proc/loadavg)

Command: \`SECTIONS=page COUNTERS=$counters PAGE_RATE=$page_rate PAGE_SIZE=$page_size PAGE_PROCS=$page_procs bench/compare.sh $seconds\`.
The same names and seeded draws for every system, each population created
before its run. Paced: latency timed from when each page was due. CPU:
microseconds per page over the servers and the load generator during the run.

| system | mode | rate | p50 | p99 | CPU µs per page | |
|---|---|---:|---:|---:|---|---|
$(printf '%s\n' "${rows[@]}")

Tally vs Redis MGET: $(ratio "${t_pages:-0}" "${r_pages:-0}") of its pages/s.
TABLE
  echo
  echo "Tally's per-process split:"
  grep -v '^output in' "$work/tally-page.txt" || true
fi

for note in "${notes[@]:-}"; do [ -n "$note" ] && echo "Skipped: $note"; done
exit 0
