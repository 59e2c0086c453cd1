// The write gap when one node of a pair is SIGKILLed, measured on this machine:
//   node --import tsx bench/recovery/failover.mts [--runs 5] [--writers 8] [--kill primary|follower|both]
// One real 1-pair cluster (default router settings) for the whole script.
// Per run: `writers` callers send unkeyed unary increments (idempotencyKey
// null: the client does not retry) to one counter; after 1.0-1.5 s of steady
// load (a random phase against the router's 250 ms health checks) the current
// primary (or follower) is SIGKILLed. Measured from the kill:
//   started-after: the first increment that started after the kill and was
//                  acknowledged (it can only have been taken by the surviving node);
//   any-ack:       the first acknowledgement of any increment after the kill;
//   longest gap:   the longest time between two acknowledgements around the kill.
// The killed node is then restarted and the pair brought back in sync (for a
// primary kill the roles have swapped: the next run kills the other process).
// Prints each run and the medians.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { NodeProcess } from '../../src/cluster/local-cluster.ts';
import { createTallyClient } from '../../src/client/index.ts';
import { waitFor, isHealthy } from '../../test/helpers/cluster.ts';
import { onePairCluster } from '../support/one-pair.mts';

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
}
function stringFlag(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? process.argv[index + 1]! : fallback;
}
const runs = flag('runs', 5);
const writerCount = flag('writers', 8);
const killWhich = stringFlag('kill', 'both');
if (killWhich !== 'primary' && killWhich !== 'follower' && killWhich !== 'both')
  throw new Error('--kill must be primary, follower or both');
/** After the first acknowledgement that started after the kill, the load goes on this long (to see it settle). */
const settleMs = 1_000;
const counter = 'failover-bench';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

interface Call {
  startMs: number;
  endMs: number;
  ok: boolean;
  error: string;
}

interface Run {
  victim: 'primary' | 'follower';
  startedAfterMs: number;
  anyAckMs: number;
  longestGapMs: number;
  failedCalls: number;
  failures: string;
  epochBefore: number;
  epochAfter: number;
  /** Router log lines about this pair after the kill, with their time from the kill. */
  routerEvents: string[];
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-failover-'));
const routerLines: { atMs: number; line: Record<string, unknown> }[] = [];
const cluster = await onePairCluster(dataDir, {
  onLine: (name, text) => {
    if (name !== 'router') return;
    try {
      routerLines.push({ atMs: performance.now(), line: JSON.parse(text) as Record<string, unknown> });
    } catch {
      // Not a log line (a stack trace): nothing to time.
    }
  },
});
await cluster.start();
const client = createTallyClient({ address: cluster.routerAddress });

async function placement(): Promise<{ primary: string; follower: string; epoch: number }> {
  const described = await client.describe(counter);
  const shard = described.placements[0]!;
  return { primary: shard.primary, follower: shard.follower, epoch: Number(shard.epoch) };
}

function nodeAt(address: string): NodeProcess {
  const node = cluster.nodes.find((candidate) => candidate.address === address);
  if (node === undefined) throw new Error(`no node at ${address}`);
  return node;
}

async function measure(victim: 'primary' | 'follower'): Promise<Run> {
  const before = await placement();
  const target = nodeAt(victim === 'primary' ? before.primary : before.follower);
  const calls: Call[] = [];
  let running = true;
  const writers = Array.from({ length: writerCount }, async () => {
    while (running) {
      const startMs = performance.now();
      try {
        await client.increment(counter, 1, { idempotencyKey: null, deadlineMs: 10_000 });
        calls.push({ startMs, endMs: performance.now(), ok: true, error: '' });
      } catch (error) {
        calls.push({ startMs, endMs: performance.now(), ok: false, error: (error as { code?: string }).code ?? (error as Error).message });
        // A refused call returns at once: do not spin on the CPU the failover needs.
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
  });
  // A random phase: the router's health checks tick every 250 ms, and a kill
  // always the same time after the previous run's would always land at the
  // same point between two ticks.
  await new Promise((resolve) => setTimeout(resolve, 1_000 + Math.random() * 500));
  const routerLinesBefore = routerLines.length;
  const killMs = performance.now();
  await target.process.stop('SIGKILL');
  const startedAfter = await waitFor(() => calls.find((call) => call.ok && call.startMs >= killMs), {
    timeoutMs: 30_000,
    intervalMs: 5,
    what: 'an increment started after the kill to be acknowledged',
  });
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  running = false;
  await Promise.all(writers);
  const after = await placement();

  const acks = calls
    .filter((call) => call.ok)
    .map((call) => call.endMs)
    .sort((a, b) => a - b);
  let longestGapMs = 0;
  for (let index = 1; index < acks.length; index++) longestGapMs = Math.max(longestGapMs, acks[index]! - acks[index - 1]!);
  const failed = calls.filter((call) => !call.ok && call.endMs >= killMs);
  const failureCounts = new Map<string, number>();
  for (const call of failed) failureCounts.set(call.error, (failureCounts.get(call.error) ?? 0) + 1);
  const routerEvents = routerLines
    .slice(routerLinesBefore)
    .filter((entry) => entry.line.level !== 'debug')
    .map(
      (entry) =>
        `+${(entry.atMs - killMs).toFixed(0)} ms ${String(entry.line.msg)}${entry.line.reason === undefined ? '' : ` (${String(entry.line.reason)})`}${entry.line.error === undefined ? '' : ` (${String(entry.line.error).slice(0, 160)})`}`,
    );

  // Back to a pair in sync before the next run.
  await target.process.start();
  await waitFor(() => isHealthy(client), { timeoutMs: 60_000, what: 'pair back in sync' });
  return {
    victim,
    startedAfterMs: startedAfter.endMs - killMs,
    anyAckMs: (acks.find((endMs) => endMs > killMs) ?? NaN) - killMs,
    longestGapMs,
    failedCalls: failed.length,
    failures: [...failureCounts].map(([code, count]) => `${count} ${code}`).join(', '),
    epochBefore: before.epoch,
    epochAfter: after.epoch,
    routerEvents,
  };
}

const results: Run[] = [];
try {
  await client.increment(counter, 1, { idempotencyKey: null });
  await waitFor(() => isHealthy(client), { timeoutMs: 30_000, what: 'pair in sync' });
  const victims = killWhich === 'both' ? (['primary', 'follower'] as const) : ([killWhich] as const);
  for (const victim of victims) {
    for (let run = 0; run < runs; run++) {
      const result = await measure(victim);
      results.push(result);
      console.log(
        `${victim} kill ${run + 1}: first ack of a call started after the kill ${result.startedAfterMs.toFixed(0)} ms, first ack of any call ${result.anyAckMs.toFixed(0)} ms, ` +
          `longest gap ${result.longestGapMs.toFixed(0)} ms; failed calls ${result.failedCalls}${result.failures ? ` (${result.failures})` : ''}; epoch ${result.epochBefore} -> ${result.epochAfter}; load ${os.loadavg()[0]!.toFixed(1)}`,
      );
      for (const event of result.routerEvents) console.log(`  router ${event}`);
    }
  }
} finally {
  client.close();
  await cluster.stop('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
}

const summary = (victim: 'primary' | 'follower') => {
  const of = results.filter((result) => result.victim === victim);
  if (of.length === 0) return undefined;
  return {
    runs: of.length,
    startedAfterMs: of.map((result) => Math.round(result.startedAfterMs)),
    startedAfterMsMedian: Math.round(median(of.map((result) => result.startedAfterMs))),
    anyAckMsMedian: Math.round(median(of.map((result) => result.anyAckMs))),
    longestGapMsMedian: Math.round(median(of.map((result) => result.longestGapMs))),
    failedCallsMedian: median(of.map((result) => result.failedCalls)),
  };
};
console.log(
  JSON.stringify({ cores: os.cpus().length, writers: writerCount, primaryKill: summary('primary'), followerKill: summary('follower') }),
);
process.exit(0);
