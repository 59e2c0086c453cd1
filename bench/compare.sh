#!/usr/bin/env bash
# One machine, one run: the same hot-counter load at the same concurrency
# against Tally and what a user would pick instead, with durability on
# everywhere. Prints one table and appends it to bench/RESULTS.md.
#   bench/compare.sh [seconds=10] [concurrency=64]
# Needs: redis-server + redis-benchmark, PostgreSQL binaries (initdb, pg_ctl,
# pgbench) from Debian's packages (installed if missing and root); each is
# skipped with a note when absent. Stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-10}"
concurrency="${2:-64}"
work="$(mktemp -d /tmp/tally-compare-XXXXXX)"
pids=()
cleanup() {
  for pid in "${pids[@]:-}"; do kill "$pid" 2>/dev/null || true; done
  if [ -n "${pgbin:-}" ] && [ -d "$work/pg" ]; then runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true; fi
  sleep 1
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
json_field() { node -e "let d='';process.stdin.on('data',c=>d+=c).on('end',()=>console.log(JSON.parse(d)['$1']))"; }

if [ "$(id -u)" = 0 ] && { ! command -v redis-server >/dev/null || ! ls /usr/lib/postgresql/*/bin/pgbench >/dev/null 2>&1; }; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server redis-tools postgresql >/dev/null 2>&1 || true
fi

declare -A result
notes=()

# Tally: a local cluster (2 pairs, replication in sync, fsync on every commit).
tally_port="$(free_port)"
node_base="$(( 30000 + RANDOM % 20000 ))"
node --import tsx src/cluster/main.ts --port "$tally_port" --node-base-port "$node_base" --metrics-port 0 --data-dir "$work/tally" > "$work/tally.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 60); do grep -q "Tally local cluster ready" "$work/tally.log" && break; sleep 0.5; done
bench() { node --import tsx src/cli/cli.ts bench --router "127.0.0.1:$tally_port" --seconds "$seconds" --json "$@" 2>/dev/null; }
result[tally_unary]="$(bench --concurrency "$concurrency" | json_field incrementsPerSec)"
result[tally_batch]="$(bench --concurrency 16 --batch 100 --procs 2 | json_field incrementsPerSec)"
result[tally_coalesced]="$(bench --concurrency "$concurrency" --coalesce | json_field incrementsPerSec)"

# The floor: a bare grpc-js unary echo.
echo_port="$(free_port)"
node --import tsx bench/grpc-echo.mts serve "$echo_port" > "$work/echo.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 40); do grep -q ready "$work/echo.log" && break; sleep 0.25; done
result[grpc_echo]="$(node --import tsx bench/grpc-echo.mts drive "$echo_port" "$concurrency" "$seconds" | json_field callsPerSec)"

# Redis: INCRBY on one key, appendonly with appendfsync always.
if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null; then
  redis_port="$(free_port)"
  mkdir -p "$work/redis"
  redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$work/redis" --appendonly yes --appendfsync always --save "" --daemonize no > "$work/redis.log" 2>&1 &
  pids+=($!)
  sleep 1
  requests=$(( 20000 * seconds ))
  result[redis]="$(redis-benchmark -p "$redis_port" -c "$concurrency" -n "$requests" -q INCRBY hot 1 2>/dev/null | tr '\r' '\n' | grep -Eo '[0-9.]+ requests per second' | tail -1 | cut -d' ' -f1)"
else
  notes+=("redis: not installed")
fi

# PostgreSQL: the hot row, UPDATE ... SET total = total + 1, fsync on.
pgbin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | tail -1 || true)"
if [ -n "$pgbin" ] && [ -x "$pgbin/pgbench" ] && id postgres >/dev/null 2>&1; then
  pg_port="$(free_port)"
  mkdir -p "$work/pg" && chown postgres "$work" "$work/pg"
  runuser -u postgres -- "$pgbin/initdb" -D "$work/pg" -A trust >/dev/null
  runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/pg" -o "-p $pg_port -k $work -c fsync=on -c synchronous_commit=on -c max_connections=200" -l "$work/pg.log" start >/dev/null
  runuser -u postgres -- "$pgbin/psql" -h "$work" -p "$pg_port" -d postgres -qc "CREATE TABLE counters (id int PRIMARY KEY, total bigint NOT NULL); INSERT INTO counters VALUES (1, 0);"
  echo "UPDATE counters SET total = total + 1 WHERE id = 1;" > "$work/hot.sql"
  chown postgres "$work/hot.sql"
  result[postgres]="$(runuser -u postgres -- "$pgbin/pgbench" -h "$work" -p "$pg_port" -n -c "$concurrency" -j 2 -T "$seconds" -f "$work/hot.sql" postgres 2>/dev/null | grep -Eo 'tps = [0-9.]+' | tail -1 | cut -d' ' -f3)"
else
  notes+=("postgres: not installed (or no postgres user)")
fi

ratio() { node -e "const a=Number('$1'),b=Number('$2');console.log(a&&b?(a/b).toFixed(2)+'x':'n/a')"; }
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
table="$(cat <<TABLE
### Comparison — $(date -u +%Y-%m-%d), commit $commit, $(nproc) cores, ${seconds} s per system, concurrency $concurrency

Command: \`bench/compare.sh $seconds $concurrency\`. Everything durable: Tally
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
$(for note in "${notes[@]:-}"; do [ -n "$note" ] && echo "
Skipped: $note"; done)
TABLE
)"
echo "$table"
printf '\n%s\n' "$table" >> bench/RESULTS.md
