// The CLI's help text: every command, its arguments and flags.

export const usage = `usage: tally <command> [arguments] [--router host:port[,host:port...]] [--json] [--deadline-ms N]

commands:
  incr <counter> [amount]       add amount (default 1; may be negative) [--key K]
  get <counter>                 read a total [--cached]
  get <counter> --last D        read a windowed total over the last D (e.g. 90000, 1500ms, 30s, 15m, 1h, 7d) [--cached]
  get-many <counter>...         read several totals [--cached]
  describe <counter>            shard count, placements and heat
  ls [prefix]                   the counters whose names start with prefix, in byte order: name,
                                kind, shards [--limit N] (--json: one object per line)
  set-shards <counter> <n>      grow a counter's shard set to n
  clear <counter>               make a counter (any kind) read 0 from now on; racing increments
                                count at most once [--key K: a retry with K clears nothing more]
  delete <counter>              delete a counter: it reads 0 from now on and its next write
                                creates a new one; the nodes free its shards (admin)
  status                        every node: role, health, epoch, sync, log position, lag
  node replace <address> <new-address>
                                move a pair's follower slot to a new node (a lost disk or
                                machine); the new node is filled by snapshot install
  directory export|import (--data-dir DIR | --etcd URL [--etcd-prefix P] [--etcd-tls-ca/cert/key F]) [--file F]
                                move the whole directory between the embedded store and etcd,
                                every router stopped (export to stdout or F, import from stdin or F)
  backup --out DIR              an online, consistent copy of the whole cluster (directory, every
                                pair's snapshot, key windows) into a new DIR, manifest last (admin)
  backup verify --from DIR      check a backup's manifest, sizes, SHA-256 and chunk CRCs (exit 0: whole)
  restore --from DIR (--data-dir ROUTER_DIR | --etcd URL [--etcd-prefix P]) --node-data-dirs D0[,D1...]
                                build a new cluster's data from a backup, before it first starts:
                                each pair's primary directory in pair order (docs/operations.md)
  pair add <primary> <follower> register a new node pair online: new shards may go there,
                                nothing moves (admin)
  pair drain <pair> [--undrain] stop (resume) placing new shards on a pair; its shards stay (admin)
  reconcile [counter]           recompute shards from their logs; report drift (exit 3 if any)
  configure <counter> [--autoscale on|off] [--window-bucket D --window-retention D | --no-window]
            [--membership-partitions N] [--ttl D|never|default]
                                let heat grow the counter's shards, or fix them; keep the last
                                D of a total in buckets (--no-window drops them); create a
                                membership counter with N partitions; delete the counter once
                                not written for D (never: not even under the router default;
                                default: follow the router's --counter-ttl-ms)
  distinct add <counter> <member>...
                                add members (any text) to a distinct counter
  distinct count <counter>...   estimated distinct members of the counters' union, ± its standard error
  member add|remove <counter> <member>
                                make a member (an unsigned 64-bit integer) present or absent
  member check <counter> <member>...
                                whether each member is present
  rebuild <counter> [--repair] [--verbose]
                                recount a membership counter from its members; report drift
                                (exit 0 either way); --repair corrects it
  health [--address host:port]  grpc.health.v1 check of any Tally process (default: each router);
                                exit 0 only when SERVING (for container health checks)
  top                           the hottest counters and the nodes, live [--limit N] [--iterations N]
  bench                         drive load and report throughput, latency and an exact-read check
      [--workload hot|cold|mix|zipf|page] [--counters N] [--zipf-s S] [--seed N]
      [--batch B] [--page-size P] [--concurrency C] [--rate R] [--seconds S]
      [--procs P] [--keyed] [--no-check] [--prefill|--no-prefill|--prefill-only]
      [--coalesce]  unary increment calls through the coalescing client (no --batch)
      [--stream]    each call a batch of --batch items on one IncrementStream per router
      [--unary-batches]  with --coalesce: its batches as unary IncrementBatch calls, not on a stream
  relay --postgres URL [--table T] [--archive-table A] [--batch N] [--relay-id ID] [--once]
      [--dead-letter-table D] [--dedup-window-ms MS] [--reconcile-every D] [--metrics-port P|any]
                                apply a PostgreSQL outbox table's rows to Tally, each exactly once
                                (docs/outbox.md); --create-table creates the tables; --resolve list
                                shows what to do with rows older than the dedup window
  recount <counter> --postgres URL --archive-table A [--table T] [--repair]
                                compare an outbox-fed counter with its archived rows; report drift
                                (exit 3 if any remains); --repair applies it as one keyed correction

The router address comes from --router, else TALLY_ROUTER, else 127.0.0.1:50051. Several
routers of one cluster, comma-separated (--router a:50051,b:50051): calls take turns over
them and pass over one that cannot be reached; a call that may have reached a router is sent
to another only when that cannot count twice (reads, keyed increments).
TLS: --tls-ca (and --tls-cert/--tls-key for a client certificate), or TALLY_TLS_CA,
TALLY_TLS_CERT, TALLY_TLS_KEY. Token: --token-file, TALLY_TOKEN_FILE or TALLY_TOKEN.`;
