// Time to refill an empty follower by snapshot install, measured on this machine:
//   node --import tsx bench/recovery/refill.mts [--shards 1000000] [--keys 10000000] [--runs 3] [--template DIR]
//     [--profile DIR] [--log-file FILE] [--timeout-s 1800] [--append-rows 100000] [--fold-rows 20000]
// 1. Builds a primary's log directly with the ShardLog API (no cluster): one
//    increment on each of `shards` distinct shard ids, then `keys` keyed
//    increments (16-byte random keys, random shards, at_ms = now so all are
//    inside the 24 h dedup window), all folded into the checkpoint with
//    foldSlice (keyed rows stay: the window needs them). With --template DIR
//    the built log is kept there and reused by later invocations of the same size.
// 2. Per run: copies that log into a fresh 1-pair cluster's primary slot
//    (the follower's data dir empty, the router's directory fresh, so the slot
//    with data is the primary), starts both nodes, waits for them to be
//    ready, then starts the router and times router start -> every node in
//    sync with replicationLagEntries 0 (ClusterStatus through the public client).
// Prints each run and the medians. More keys than dedupKeysMax (5M) in the
// window do not finish today: see "Refilling an empty follower" in RESULTS.md.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ShardLog, type LogEntry } from '../../src/node/log/index.ts';
import { checkpointFolder } from '../../src/node/state/node-memory.ts';
import { ManagedProcess } from '../../src/cluster/managed-process.ts';
import { createTallyClient, type TallyClient } from '../../src/client/index.ts';
import { credentials } from '@grpc/grpc-js';
import { ShardNodeClient, type shardV1 } from '../../src/common/index.ts';
import { clientChannelOptions } from '../../src/wire/index.ts';
import { waitFor } from '../../test/helpers/cluster.ts';
import { onePairCluster } from '../support/one-pair.mts';

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
}
function stringFlag(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? process.argv[index + 1] : undefined;
}
const shardCount = flag('shards', 1_000_000);
const keyCount = flag('keys', 10_000_000);
const runs = flag('runs', 3);
/** Rows per append transaction while building (one fsync each). */
const appendRows = flag('append-rows', 100_000);
/** Rows per foldSlice while building: each slice reads the touched shards with one IN (...) list. */
const foldRows = flag('fold-rows', 20_000);
/** How long one refill may take before the run is declared stuck. */
const refillTimeoutMs = flag('timeout-s', 1_800) * 1000;
/** With --profile DIR, both nodes run under bench/cpu/profiled-node.mts and leave .cpuprofile files there. */
const profileDir = stringFlag('profile');
/** With --log-file FILE, every line of every process goes there (with the time it arrived). */
const logFile = stringFlag('log-file');
const dedupWindowMs = 24 * 60 * 60 * 1000;
const mib = 1024 * 1024;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** node.sqlite plus its WAL (a running node's WAL can hold much of the data). */
function dbBytes(dir: string): { mainBytes: number; walBytes: number } {
  const size = (file: string): number => (fs.existsSync(file) ? fs.statSync(file).size : 0);
  return { mainBytes: size(path.join(dir, 'node.sqlite')), walBytes: size(path.join(dir, 'node.sqlite-wal')) };
}

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssBytes(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match === null ? 0 : Number(match[1]) * 1024;
}

// 1. The primary's log.
const shapeTag = `shards=${shardCount} keys=${keyCount}`;
const templateDir = stringFlag('template') ?? fs.mkdtempSync(path.join(os.tmpdir(), 'tally-refill-template-'));
const keepTemplate = stringFlag('template') !== undefined;
let build: { appendMs: number; foldMs: number; rows: number } | undefined;
{
  const existing = fs.existsSync(path.join(templateDir, 'node.sqlite')) ? ShardLog.open(templateDir, checkpointFolder) : undefined;
  const reusable = existing?.getMeta('bench_shape') === shapeTag && existing.checkpointLsn === existing.lastLsn;
  existing?.close();
  if (!reusable) {
    fs.rmSync(templateDir, { recursive: true, force: true });
    const log = ShardLog.open(templateDir, checkpointFolder);
    const rows = shardCount + keyCount;
    const appendStartedMs = Date.now();
    for (let start = 0; start < shardCount; start += appendRows) {
      const entries: LogEntry[] = [];
      for (let shardId = start + 1; shardId <= Math.min(shardCount, start + appendRows); shardId++) {
        entries.push({ shardId, amount: 1n, idempotencyKey: Buffer.alloc(0), fenceShardCount: 0 });
      }
      log.append(entries, 1n, Date.now());
    }
    for (let start = 0; start < keyCount; start += appendRows) {
      const count = Math.min(appendRows, keyCount - start);
      const keyBytes = randomBytes(16 * count);
      const entries: LogEntry[] = new Array(count);
      for (let offset = 0; offset < count; offset++) {
        entries[offset] = {
          shardId: 1 + Math.floor(Math.random() * shardCount),
          amount: 1n,
          idempotencyKey: keyBytes.subarray(16 * offset, 16 * offset + 16),
          fenceShardCount: 0,
        };
      }
      log.append(entries, 1n, Date.now());
      if ((start / appendRows) % 20 === 19)
        console.error(`built ${start + count} of ${keyCount} keys (${((Date.now() - appendStartedMs) / 1000).toFixed(0)} s)`);
    }
    const appendMs = Date.now() - appendStartedMs;
    const foldStartedMs = Date.now();
    const keepKeysSinceMs = Date.now() - dedupWindowMs;
    // Bounded: each slice folds foldRows rows, or the loop ends.
    for (let slice = 0; slice < rows / foldRows + 2; slice++) {
      if (log.foldSlice(log.lastLsn, foldRows, keepKeysSinceMs) === 0) break;
    }
    if (log.checkpointLsn !== log.lastLsn) throw new Error(`fold stopped at ${log.checkpointLsn} of ${log.lastLsn}`);
    log.setMeta('bench_shape', shapeTag);
    log.close();
    build = { appendMs, foldMs: Date.now() - foldStartedMs, rows };
    console.error(`built ${rows} rows: append ${(appendMs / 1000).toFixed(1)} s, fold ${(build.foldMs / 1000).toFixed(1)} s`);
  }
}
const primaryLog = dbBytes(templateDir);
console.error(`primary log: ${(primaryLog.mainBytes / mib).toFixed(1)} MiB (${shapeTag})`);

/**
 * Polls a node's internal Status (what the router's supervisor sees) and
 * notes every change of its replication state: an install that restarts or a
 * chunk call that fails shows here, not in ClusterStatus.
 */
function watchReplication(address: string, sinceMs: number): { transitions: string[]; stop: () => void } {
  const rpc = new ShardNodeClient(address, credentials.createInsecure(), clientChannelOptions) as unknown as {
    Status(
      request: object,
      options: { deadline: number },
      callback: (error: Error | null, response?: shardV1.StatusResponse__Output) => void,
    ): void;
    close(): void;
  };
  const transitions: string[] = [];
  let last = '';
  let polling = false;
  const timer = setInterval(() => {
    if (polling) return;
    polling = true;
    rpc.Status({}, { deadline: Date.now() + 2_000 }, (error, response) => {
      polling = false;
      const state =
        error !== null || response === undefined
          ? `no answer (${error?.message.slice(0, 80)})`
          : `role=${response.role} installing=${response.installing} ackedLsn=${response.followerAckedLsn} caughtUp=${response.followerCaughtUp} followerError="${response.followerError}"`;
      if (state !== last) transitions.push(`+${((Date.now() - sinceMs) / 1000).toFixed(1)} s ${state}`);
      last = state;
    });
  }, 250);
  timer.unref();
  return {
    transitions,
    stop: () => {
      clearInterval(timer);
      rpc.close();
    },
  };
}

// 2. Refills.
interface Run {
  refillMs: number;
  primaryReadyMs: number;
  primaryReplayMs: number;
  installStartMs: number | undefined;
  installDurationMs: number | undefined;
  followerInstalledMs: number | undefined;
  chunks: number | undefined;
  followerMainBytes: number;
  followerWalBytes: number;
  followerRssBytes: number;
  primaryRssBytes: number;
  followerShards: number;
  loadAverage: string;
  primaryCpuSeconds: number;
  followerCpuSeconds: number;
  notable: string[];
}
const results: Run[] = [];
for (let run = 0; run < runs; run++) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-refill-'));
  const events: { atMs: number; name: string; line: Record<string, unknown> }[] = [];
  const notable: string[] = [];
  const cluster = await onePairCluster(dataDir, {
    onLine: (name, text) => {
      if (logFile !== undefined) fs.appendFileSync(logFile, `${new Date().toISOString()} run ${run + 1} [${name}] ${text}\n`);
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        notable.push(`${name}: ${text.slice(0, 300)}`);
        return;
      }
      events.push({ atMs: Date.now(), name, line });
      const level = line.level;
      if (level === 'warn' || level === 'error' || level === 40 || level === 50 || String(line.msg).startsWith('snapshot')) {
        notable.push(`${name}: ${text.slice(0, 400)}`);
      }
    },
  });
  if (profileDir !== undefined) {
    fs.mkdirSync(profileDir, { recursive: true });
    for (const node of cluster.nodes) {
      node.process = new ManagedProcess({
        ...node.process.options,
        script: path.join(import.meta.dirname, '../cpu/profiled-node.mts'),
        env: { TALLY_PROFILE_DIR: path.resolve(profileDir) },
      });
    }
  }
  const primary = cluster.node(0, 'primary');
  const follower = cluster.node(0, 'follower');
  fs.mkdirSync(primary.dataDir, { recursive: true });
  fs.copyFileSync(path.join(templateDir, 'node.sqlite'), path.join(primary.dataDir, 'node.sqlite'));
  // Made once the router has reported the port it took.
  let routerClient: TallyClient | undefined;
  try {
    // Nodes first, each with time to replay: the primary holds every key of the window.
    const nodesStartedMs = Date.now();
    await Promise.all([primary.process.start(refillTimeoutMs), follower.process.start(refillTimeoutMs)]);
    const primaryReadyMs = Date.now() - nodesStartedMs;
    const primaryReady = events.find((event) => event.name === primary.process.name && event.line.msg === 'ready');
    const cpuBefore = { primary: cpuSeconds(primary.process.pid), follower: cpuSeconds(follower.process.pid) };
    const loadBefore = os.loadavg()[0]!.toFixed(1);
    const routerStartedMs = Date.now();
    const watcher = watchReplication(primary.address, routerStartedMs);
    await cluster.router.start();
    const client = createTallyClient({ address: cluster.routerAddress, deadlineMs: 10_000 });
    routerClient = client;
    let lastStatus = '';
    await waitFor(
      async () => {
        const status = await client.clusterStatus();
        lastStatus = status.nodes
          .map(
            (node) =>
              `${node.role} ${node.health} inSync=${node.inSync} lsn=${node.lastLsn} lag=${node.replicationLagEntries} ${node.error}`,
          )
          .join('; ');
        return (
          status.nodes.length === 2 &&
          status.nodes.every((node) => node.health === 'SERVING' && node.inSync && node.replicationLagEntries === 0n)
        );
      },
      { timeoutMs: refillTimeoutMs, intervalMs: 100, what: `pair in sync (last status: ${lastStatus})` },
    );
    const refillMs = Date.now() - routerStartedMs;
    watcher.stop();
    for (const transition of watcher.transitions) notable.push(`primary status ${transition}`);
    const cpuAfter = { primary: cpuSeconds(primary.process.pid), follower: cpuSeconds(follower.process.pid) };
    const status = await client.clusterStatus();
    const followerStatus = status.nodes.find((node) => node.role === 'follower')!;
    const installStart = events.find((event) => event.name === primary.process.name && event.line.msg === 'snapshot install');
    const installed = events.find((event) => event.name === primary.process.name && event.line.msg === 'snapshot installed');
    const followerInstalled = events.find((event) => event.name === follower.process.name && event.line.msg === 'snapshot installed');
    const followerDb = dbBytes(follower.dataDir);
    const result: Run = {
      refillMs,
      primaryReadyMs,
      primaryReplayMs: Number(primaryReady?.line.replayMs ?? NaN),
      installStartMs: installStart === undefined ? undefined : installStart.atMs - routerStartedMs,
      installDurationMs: installed === undefined ? undefined : Number(installed.line.durationMs),
      followerInstalledMs: followerInstalled === undefined ? undefined : followerInstalled.atMs - routerStartedMs,
      chunks:
        installed === undefined
          ? followerInstalled === undefined
            ? undefined
            : Number(followerInstalled.line.chunks)
          : Number(installed.line.chunks),
      followerMainBytes: followerDb.mainBytes,
      followerWalBytes: followerDb.walBytes,
      followerRssBytes: rssBytes(follower.process.pid),
      primaryRssBytes: rssBytes(primary.process.pid),
      followerShards: followerStatus.shardCount,
      loadAverage: `${loadBefore} -> ${os.loadavg()[0]!.toFixed(1)}`,
      primaryCpuSeconds: cpuAfter.primary - cpuBefore.primary,
      followerCpuSeconds: cpuAfter.follower - cpuBefore.follower,
      notable,
    };
    results.push(result);
    console.log(
      `run ${run + 1}: in sync ${(refillMs / 1000).toFixed(1)} s after router start (install began at ${((result.installStartMs ?? NaN) / 1000).toFixed(1)} s, ` +
        `primary says ${((result.installDurationMs ?? NaN) / 1000).toFixed(1)} s in ${result.chunks} chunks, follower installed at ${((result.followerInstalledMs ?? NaN) / 1000).toFixed(1)} s); ` +
        `${(primaryLog.mainBytes / mib / (refillMs / 1000)).toFixed(1)} MiB/s of primary log; follower db ${(followerDb.mainBytes / mib).toFixed(1)} MiB + WAL ${(followerDb.walBytes / mib).toFixed(1)} MiB, ` +
        `RSS follower ${(result.followerRssBytes / mib).toFixed(0)} MiB, primary ${(result.primaryRssBytes / mib).toFixed(0)} MiB; follower shards ${result.followerShards}; ` +
        `CPU during refill: primary ${result.primaryCpuSeconds.toFixed(1)} s, follower ${result.followerCpuSeconds.toFixed(1)} s; ` +
        `load average ${result.loadAverage}; primary ready in ${(primaryReadyMs / 1000).toFixed(1)} s (replay ${result.primaryReplayMs} ms)`,
    );
    for (const line of notable) console.log(`  ${line}`);
  } catch (error) {
    console.log(`run ${run + 1} FAILED: ${(error as Error).message}`);
    for (const line of notable) console.log(`  ${line}`);
    throw error;
  } finally {
    routerClient?.close();
    // SIGTERM: a node run under --profile writes its profile on a clean exit.
    await cluster.stop('SIGTERM');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
if (!keepTemplate) fs.rmSync(templateDir, { recursive: true, force: true });

const refillMedianMs = median(results.map((result) => result.refillMs));
console.log(
  JSON.stringify({
    cores: os.cpus().length,
    shards: shardCount,
    keys: keyCount,
    runs,
    build: build === undefined ? 'reused' : { appendSeconds: build.appendMs / 1000, foldSeconds: build.foldMs / 1000 },
    primaryLogMiB: Number((primaryLog.mainBytes / mib).toFixed(1)),
    refillSeconds: results.map((result) => result.refillMs / 1000),
    refillSecondsMedian: refillMedianMs / 1000,
    primaryLogMiBPerSecMedian: Number((primaryLog.mainBytes / mib / (refillMedianMs / 1000)).toFixed(1)),
    keysPerSecMedian: Math.round(keyCount / (refillMedianMs / 1000)),
    installSecondsByPrimary: results.map((result) => (result.installDurationMs ?? NaN) / 1000),
    followerDbMiBMedian: Number((median(results.map((result) => result.followerMainBytes + result.followerWalBytes)) / mib).toFixed(1)),
    followerRssMiBMedian: Math.round(median(results.map((result) => result.followerRssBytes)) / mib),
    primaryRssMiBMedian: Math.round(median(results.map((result) => result.primaryRssBytes)) / mib),
    primaryCpuSecondsMedian: median(results.map((result) => result.primaryCpuSeconds)),
    followerCpuSecondsMedian: median(results.map((result) => result.followerCpuSeconds)),
    primaryReadySecondsMedian: median(results.map((result) => result.primaryReadyMs)) / 1000,
  }),
);
process.exit(0);
