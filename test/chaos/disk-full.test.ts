// Full disks (issue 17, item 7), on real processes: the pair's primary, its
// follower and the router each keep their data directory on a small tmpfs of
// its own, filled with a filler file under load and freed again. A full disk
// must answer RESOURCE_EXHAUSTED (never INTERNAL), lose nothing acknowledged,
// show in tally_data_dir_free_bytes, and heal by itself once there is room.
// Needs root for mount (CI runs as root): without it the test fails, it does not skip.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, status } from '@grpc/grpc-js';
import { ShardNodeClient, type shardV1 } from '../../src/common/index.ts';
import { TallyError, type TallyClient } from '../../src/client/index.ts';
import { holdsFor, scrapeMetric, startCluster, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import { Ledger, classify, expectNoDrift, startLoad } from '../helpers/load.ts';
import { removeTempDir } from '../helpers/temp-dir.ts';
import { pause } from '../helpers/pause.ts';

const mib = 1024 * 1024;
/** Room for a node's log, its WAL (~4 MiB before SQLite checkpoints it) and some seconds of load. */
const nodeDiskBytes = 32 * mib;
const routerDiskBytes = 8 * mib;
/** "Near 0": tmpfs hands out whole pages, so a filled one reports 0; a little slack for what a process frees. */
const nearlyFullBytes = 64 * 1024;
const fillerName = 'filler';
const routerArgs = ['--follower-timeout-ms', '800', '--failover-timeout-ms', '3000'];
// Folds every half second: a full disk meets the checkpointer often, not only the write path.
const nodeArgs = ['--checkpoint-interval-ms', '500', '--replication-timeout-ms', '500'];
const internalReason = /internal|database or disk is full/i;

const mounted: string[] = [];

function mountTmpfs(dir: string, sizeBytes: number): void {
  fs.mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(
      `cannot mount a ${sizeBytes / mib} MiB tmpfs at ${dir}: this test needs root (CI runs it as root): ${stderr ?? error}`,
      { cause: error },
    );
  }
  mounted.push(dir);
}

function unmountAll(): void {
  // Lazy: a process that outlived its SIGKILL must not leave the mount behind.
  for (const dir of mounted.splice(0).reverse()) execFileSync('umount', ['-l', dir]);
}

/** Writes a filler file in dir until its filesystem refuses another page; again when called again. */
function fill(dir: string): void {
  const fd = fs.openSync(path.join(dir, fillerName), 'a');
  const chunk = Buffer.alloc(mib);
  try {
    let sizeBytes = chunk.length;
    // Bounded: each write either takes space (of at most nodeDiskBytes) or halves the size, down to a page.
    for (let step = 0; step < 10_000 && sizeBytes >= 4_096; step++) {
      try {
        fs.writeSync(fd, chunk, 0, sizeBytes);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        sizeBytes /= 2;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
}

function unfill(dir: string): void {
  fs.rmSync(path.join(dir, fillerName), { force: true });
}

/** One unkeyed increment, recorded in ledger like the load's; resolves with its error (undefined when it applied). */
async function probe(client: TallyClient, ledger: Ledger, counter: string): Promise<TallyError | undefined> {
  try {
    await client.increment(counter, 1n, { idempotencyKey: null, deadlineMs: 3_000 });
    ledger.record(counter, 1n, 'ok');
    return undefined;
  } catch (error) {
    ledger.record(counter, 1n, classify(error));
    ledger.recordError(error);
    if (error instanceof TallyError) return error;
    throw error;
  }
}

/** Keyed writers (a new key each call): keyed rows stay in the log for the dedup window, so the log keeps growing. */
function startKeyedLoad(client: TallyClient, counter: string, concurrency: number): { ledger: Ledger; stop: () => Promise<void> } {
  const ledger = new Ledger();
  let running = true;
  const writers = Array.from({ length: concurrency }, async (_, writer) => {
    for (let sequence = 0; running; sequence++) {
      try {
        await client.increment(counter, 1n, { idempotencyKey: `${writer}-${sequence}-${'k'.repeat(96)}`, deadlineMs: 3_000 });
        ledger.record(counter, 1n, 'ok');
      } catch (error) {
        ledger.record(counter, 1n, classify(error));
        ledger.recordError(error);
        await pause(20);
      }
    }
  });
  return {
    ledger,
    stop: async () => {
      running = false;
      await Promise.all(writers);
    },
  };
}

function nodeStatus(address: string): Promise<shardV1.StatusResponse__Output> {
  const rpc = new ShardNodeClient(address, credentials.createInsecure());
  return new Promise((resolve, reject) => {
    rpc.Status({}, { deadline: Date.now() + 2_000 }, (error, response) => {
      rpc.close();
      if (error || response === undefined) reject(error ?? new Error('no status'));
      else resolve(response);
    });
  });
}

function describeGrpc(error: TallyError | undefined): string {
  return error === undefined ? 'applied' : `${status[error.grpcCode]}: ${error.message}`;
}

describe('disk full', () => {
  let tc: TestCluster | undefined;
  let dataDir = '';
  let primaryDir = '';
  let followerDir = '';
  let routerDir = '';
  const counters = ['disk:a', 'disk:b', 'disk:c'];
  let load: ReturnType<typeof startLoad>;
  let keyed: ReturnType<typeof startKeyedLoad>;
  // The test's own calls write probe:* counters only: a ledger's bounds hold for counters it alone writes.
  const probes = new Ledger();

  beforeAll(async () => {
    tc = await startCluster({
      pairs: 1,
      metrics: true,
      routerArgs,
      nodeArgs,
      beforeStart: (dir) => {
        dataDir = dir;
        primaryDir = path.join(dir, 'node-0-primary');
        followerDir = path.join(dir, 'node-0-follower');
        routerDir = path.join(dir, 'router');
        try {
          mountTmpfs(primaryDir, nodeDiskBytes);
          mountTmpfs(followerDir, nodeDiskBytes);
          mountTmpfs(routerDir, routerDiskBytes);
        } catch (error) {
          // Mounts left in the data directory would keep startCluster from removing it (and hide this error).
          unmountAll();
          throw error;
        }
      },
    });
    await waitForHealthy(tc.client);
    load = startLoad(tc.client, { counters: () => counters[Math.floor(Math.random() * counters.length)]!, concurrency: 4 });
    keyed = startKeyedLoad(tc.client, 'disk:keyed', 2);
    await waitFor(() => load.ledger.okCalls > 100 && keyed.ledger.okCalls > 50, { timeoutMs: 15_000, what: 'load before any disk fills' });
  }, 60_000);

  afterAll(async () => {
    await load?.stop();
    await keyed?.stop();
    await tc?.cluster.stop('SIGKILL');
    unmountAll();
    await tc?.stop();
    if (dataDir !== '') removeTempDir(dataDir);
  });

  it('node: a primary whose disk fills refuses increments RESOURCE_EXHAUSTED (not INTERNAL), its gauge reads 0, it keeps serving reads, and writes and folds resume once there is room', async () => {
    const { client, cluster } = tc!;
    const primary = cluster.node(0, 'primary');
    const pidBefore = (await nodeStatus(primary.address)).pid;
    const failedBefore = load.ledger.failedCalls;
    fill(primaryDir);
    const refusal = await waitFor(
      async () => {
        fill(primaryDir);
        const error = await probe(client, probes, 'probe:a');
        return error?.grpcCode === status.RESOURCE_EXHAUSTED ? error : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 100, what: 'an increment refused RESOURCE_EXHAUSTED on the full primary' },
    );
    expect(refusal.message).toMatch(/node node-0-primary data directory is full: nothing was written \(SQLITE_FULL\)/);
    expect(refusal.message).not.toMatch(/\//);
    expect(await scrapeMetric(primary.metricsPort, 'tally_data_dir_free_bytes')).toBeLessThan(nearlyFullBytes);
    // Each directory has its own gauge: the router's is not full.
    expect(await scrapeMetric(tc!.routerMetricsPort, 'tally_data_dir_free_bytes')).toBeGreaterThan(mib);
    // Still full: every write is refused the same way, keyed or not, and the load sees refusals, never INTERNAL.
    await holdsFor(
      async () => {
        const [plain, withKey] = await Promise.all([
          probe(client, probes, 'probe:b'),
          client.increment('probe:keyed', 1n, { idempotencyKey: `probe-${Date.now()}`, deadlineMs: 3_000 }).then(
            () => undefined,
            (error: unknown) => error as TallyError,
          ),
        ]);
        if (withKey === undefined) probes.record('probe:keyed', 1n, 'ok');
        else probes.record('probe:keyed', 1n, classify(withKey));
        expect(describeGrpc(plain)).toMatch(/^RESOURCE_EXHAUSTED: /);
        expect(describeGrpc(withKey)).toMatch(/^RESOURCE_EXHAUSTED: /);
        return true;
      },
      1_000,
      { what: 'refusals on the full primary' },
    );
    expect(load.ledger.failedCalls).toBeGreaterThan(failedBefore);
    // The checkpointer meets the full disk too: it logs, the node stays up, nothing is folded. Unless
    // a fold finished just before the disk filled and left nothing to fold (a race the machine's load
    // decides): then it never writes while full, and what must hold is that its checkpoint covers the log.
    await waitFor(
      async () =>
        tc!.logs.some(
          (line) =>
            line.startsWith('[node-0-primary]') && line.includes('"msg":"checkpoint failed"') && line.includes('data directory is full'),
        ) ||
        BigInt(await scrapeMetric(primary.metricsPort, 'tally_checkpoint_lsn')) === BigInt((await nodeStatus(primary.address)).lastLsn),
      {
        timeoutMs: 5_000,
        what: 'the primary to log a failed checkpoint (or to have nothing left to fold)',
      },
    );
    const checkpointWhileFull = await scrapeMetric(primary.metricsPort, 'tally_checkpoint_lsn');
    // Reads answer from memory: everything acknowledged so far is there.
    await load.ledger.expectWithinBounds(client);
    await keyed.ledger.expectWithinBounds(client);

    unfill(primaryDir);
    await waitFor(async () => (await probe(client, probes, 'probe:c')) === undefined, {
      timeoutMs: 10_000,
      what: 'writes to resume once the filler is gone',
    });
    await waitFor(async () => (await scrapeMetric(primary.metricsPort, 'tally_checkpoint_lsn')) > checkpointWhileFull, {
      timeoutMs: 10_000,
      what: 'the checkpointer to fold again',
    });
    expect(await scrapeMetric(primary.metricsPort, 'tally_data_dir_free_bytes')).toBeGreaterThan(mib);
    const after = await nodeStatus(primary.address);
    expect(after.pid).toBe(pidBefore);
    expect(after.role).toBe('primary');
    const okAfter = load.ledger.okCalls;
    await waitFor(() => load.ledger.okCalls > okAfter + 50, { timeoutMs: 10_000, what: 'the load to succeed again' });
  }, 60_000);

  it('node: a follower whose disk fills refuses AppendEntries RESOURCE_EXHAUSTED; the pair goes out of sync, the primary acknowledges alone, and the follower catches up once there is room', async () => {
    const { client, cluster } = tc!;
    const primary = cluster.node(0, 'primary');
    const follower = cluster.node(0, 'follower');
    fill(followerDir);
    await waitFor(
      async () => {
        fill(followerDir);
        return /^RESOURCE_EXHAUSTED: node node-0-follower data directory is full/.test((await nodeStatus(primary.address)).followerError);
      },
      { timeoutMs: 15_000, intervalMs: 100, what: "the primary to see its follower's disk full" },
    );
    expect(await scrapeMetric(follower.metricsPort, 'tally_data_dir_free_bytes')).toBeLessThan(nearlyFullBytes);
    // Acknowledging waits for the follower only while in sync: the router drops the pair out of sync and writes go on.
    await waitFor(async () => !(await client.clusterStatus()).nodes[0]!.inSync, { timeoutMs: 10_000, what: 'the pair out of sync' });
    await waitFor(async () => (await probe(client, probes, 'probe:a')) === undefined, {
      timeoutMs: 10_000,
      what: 'the primary to acknowledge alone',
    });
    const okOutOfSync = load.ledger.okCalls;
    await waitFor(() => load.ledger.okCalls > okOutOfSync + 50, { timeoutMs: 10_000, what: 'the load to go on out of sync' });
    expect((await nodeStatus(follower.address)).role).toBe('follower');

    unfill(followerDir);
    await waitForHealthy(client, 30_000);
  }, 60_000);

  it('router: on a full directory disk a new counter is refused RESOURCE_EXHAUSTED, existing counters keep taking increments, and creation works again once there is room', async () => {
    const { client } = tc!;
    fill(routerDir);
    expect(await scrapeMetric(tc!.routerMetricsPort, 'tally_data_dir_free_bytes')).toBeLessThan(nearlyFullBytes);
    let attempt = 0;
    const refusal = await waitFor(
      async () => {
        fill(routerDir);
        const error = await probe(client, probes, `probe:new-${attempt++}`);
        return error?.grpcCode === status.RESOURCE_EXHAUSTED ? error : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: 'a new counter refused RESOURCE_EXHAUSTED' },
    );
    expect(refusal.message).toBe('router data directory is full: nothing was written (SQLITE_FULL)');
    expect(await probe(client, probes, 'probe:refused-while-full')).toMatchObject({ grpcCode: status.RESOURCE_EXHAUSTED });
    // Counters already in the directory need no write there.
    expect(describeGrpc(await probe(client, probes, 'probe:a'))).toBe('applied');
    const okWhileFull = load.ledger.okCalls;
    await waitFor(() => load.ledger.okCalls > okWhileFull + 50, { timeoutMs: 10_000, what: 'existing counters to keep taking increments' });

    unfill(routerDir);
    await waitFor(async () => (await probe(client, probes, 'probe:refused-while-full')) === undefined, {
      timeoutMs: 10_000,
      what: 'a new counter created once there is room',
    });
    expect((await client.read('probe:refused-while-full')).total).toBe(1n);
  }, 60_000);

  it('nothing acknowledged was lost: ok <= exact total <= ok + unknown for every counter, no INTERNAL anywhere, no drift', async () => {
    const { client } = tc!;
    await load.stop();
    await keyed.stop();
    await waitForHealthy(client, 30_000);
    for (const ledger of [load.ledger, keyed.ledger, probes]) {
      if (ledger.counters().length > 0) await ledger.expectWithinBounds(client);
      expect(
        [...ledger.reasons.keys()].filter((reason) => internalReason.test(reason)),
        ledger.topReasons(),
      ).toEqual([]);
    }
    expect(load.ledger.failedCalls, 'RESOURCE_EXHAUSTED refusals counted as certainly not applied').toBeGreaterThan(0);
    await expectNoDrift(client);
  }, 60_000);
});
