// The supervisor election on a real etcd (issue 18, item 4): one supervisor at
// a time, a clean stop hands over at once, a dead supervisor is replaced
// within its lease, a supervisor cut off from etcd steps down before its lease
// can expire, and a deposed supervisor's fence no longer passes.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { Etcd3 } from 'etcd3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EtcdProcess } from '../../src/cluster/etcd-process.ts';
import { repoRoot } from '../../src/cluster/managed-process.ts';
import { createLogger } from '../../src/common/index.ts';
import {
  EtcdSupervisorElection,
  requireSupervisor,
  supervisorKey,
  type SupervisorFence,
} from '../../src/router/supervision/supervisor-election.ts';
import { holdsFor, waitFor } from '../helpers/cluster.ts';
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.ts';

/** Short enough for a test, long enough that a loaded 2-core machine keeps its keepalives. */
const leaseTtlMs = 2_000;
/** Slack for a loaded machine on top of the bounds the protocol gives. */
const marginMs = 1_500;

let dataDir: string;
let etcd: EtcdProcess;
const cleanups: (() => Promise<void> | void)[] = [];
let prefixCount = 0;

beforeAll(async () => {
  dataDir = makeTempDir('supervisor-election');
  etcd = new EtcdProcess({ dataDir: path.join(dataDir, 'etcd') });
  await etcd.start();
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await etcd?.stop();
  removeTempDir(dataDir);
});

function newPrefix(): string {
  prefixCount += 1;
  return `/election-test-${prefixCount}/`;
}

function newClient(endpoint = etcd.endpoint): Etcd3 {
  const client = new Etcd3({ hosts: endpoint });
  cleanups.push(() => client.close());
  return client;
}

interface Candidate {
  election: EtcdSupervisorElection;
  client: Etcd3;
  routerId: string;
}

function newCandidate(prefix: string, routerId: string, endpoint = etcd.endpoint): Candidate {
  const client = newClient(endpoint);
  const election = new EtcdSupervisorElection(client, prefix, routerId, leaseTtlMs, createLogger(`election-${routerId}`, 'error'));
  cleanups.push(() => election.stop());
  return { election, client, routerId };
}

/**
 * Samples every candidate every few ms and follows their onChange calls;
 * records any moment at which two of them claim to supervise.
 */
function watchForTwoLeaders(candidates: Candidate[]): { overlaps: string[]; stop(): void } {
  const overlaps: string[] = [];
  const leading = new Set<string>();
  for (const { election, routerId } of candidates) {
    election.onChange((leader) => {
      if (leader) leading.add(routerId);
      else leading.delete(routerId);
      if (leading.size > 1) overlaps.push(`onChange: ${[...leading].join(' and ')}`);
    });
  }
  const timer = setInterval(() => {
    const leaders = candidates.filter(({ election }) => election.isLeader).map(({ routerId }) => routerId);
    if (leaders.length > 1) overlaps.push(`sampled: ${leaders.join(' and ')}`);
  }, 5);
  cleanups.push(() => clearInterval(timer));
  return { overlaps, stop: () => clearInterval(timer) };
}

function leadersOf(candidates: Candidate[]): Candidate[] {
  return candidates.filter(({ election }) => election.isLeader);
}

/** Milliseconds until check() holds, polled every 5 ms. */
async function msUntil(check: () => boolean, timeoutMs: number, what: string): Promise<number> {
  const startedMs = performance.now();
  await waitFor(check, { timeoutMs, intervalMs: 5, what });
  return Math.round(performance.now() - startedMs);
}

/** A pair-update transaction fenced on the supervisor key, as the etcd directory store makes it. */
async function fencedPut(client: Etcd3, prefix: string, fence: SupervisorFence, value: string): Promise<boolean> {
  const pairKey = `${prefix}pairs/0`;
  const readRevision = (await client.get(pairKey).exec()).kvs[0]?.mod_revision ?? '0';
  const result = await requireSupervisor(client.if(pairKey, 'Mod', '==', readRevision), fence)
    .then(client.put(pairKey).value(value))
    .commit();
  return result.succeeded;
}

/**
 * A TCP relay to etcd that the test can sever: a router cut off from etcd by
 * the network, while its process and etcd both live on. (Closing the etcd3
 * client is no such cut: its open watch stream keeps delivering events.)
 */
async function startRelay(target: string): Promise<{ endpoint: string; sever(): void }> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    const outbound = net.connect(Number(port), hostname);
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sever = (): void => {
    server.close();
    for (const socket of sockets) socket.destroy();
  };
  cleanups.push(sever);
  return { endpoint: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, sever };
}

/** An election in a child process: the test can SIGKILL it. */
interface ChildCandidate {
  child: ChildProcess;
  leader: boolean;
  output: string[];
}

function startChildCandidate(prefix: string, routerId: string): ChildCandidate {
  const script = path.join(repoRoot, 'test/helpers/election-process.ts');
  const child = spawn(process.execPath, ['--import', 'tsx', script, etcd.endpoint, prefix, routerId, String(leaseTtlMs)], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const candidate: ChildCandidate = { child, leader: false, output: [] };
  readline.createInterface({ input: child.stdout! }).on('line', (line) => {
    candidate.output.push(line);
    const { leader } = JSON.parse(line) as { leader?: boolean };
    if (leader !== undefined) candidate.leader = leader;
  });
  readline.createInterface({ input: child.stderr! }).on('line', (line) => candidate.output.push(line));
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return candidate;
}

describe('supervisor election on etcd', () => {
  it('of two routers on one etcd exactly one supervises, and the other names it', async () => {
    const prefix = newPrefix();
    const candidates = [newCandidate(prefix, 'router-a'), newCandidate(prefix, 'router-b')];
    const monitor = watchForTwoLeaders(candidates);
    await Promise.all(candidates.map(({ election }) => election.start()));
    await waitFor(() => leadersOf(candidates).length === 1, { timeoutMs: leaseTtlMs, what: 'one supervisor' });
    const [leader] = leadersOf(candidates);
    const follower = candidates.find((candidate) => candidate !== leader)!;
    // Through several keepalive rounds: no flapping, no second supervisor.
    await holdsFor(() => leader!.election.isLeader && !follower.election.isLeader, 2 * leaseTtlMs, { what: 'one stable supervisor' });
    expect(leader!.election.leaderId).toBe(leader!.routerId);
    expect(follower.election.leaderId).toBe(leader!.routerId);
    expect(follower.election.leaderFence()).toBeUndefined();
    const fence = leader!.election.leaderFence()!;
    expect(fence.key).toBe(supervisorKey(prefix));
    const stored = (await leader!.client.get(supervisorKey(prefix)).exec()).kvs[0]!;
    expect({ value: stored.value.toString(), createRevision: stored.create_revision }).toEqual({
      value: leader!.routerId,
      createRevision: fence.createRevision,
    });
    monitor.stop();
    expect(monitor.overlaps).toEqual([]);
  });

  it("stop() of the supervisor hands over within a second, and the old supervisor's fence no longer passes", async () => {
    const prefix = newPrefix();
    const candidates = [newCandidate(prefix, 'router-a'), newCandidate(prefix, 'router-b')];
    const monitor = watchForTwoLeaders(candidates);
    await Promise.all(candidates.map(({ election }) => election.start()));
    await waitFor(() => leadersOf(candidates).length === 1, { timeoutMs: leaseTtlMs, what: 'one supervisor' });
    const [leader] = leadersOf(candidates);
    const follower = candidates.find((candidate) => candidate !== leader)!;
    const oldFence = leader!.election.leaderFence()!;
    expect(await fencedPut(leader!.client, prefix, oldFence, 'by the first supervisor')).toBe(true);

    const stopped = leader!.election.stop();
    // Stepped down the moment stop() was called, before etcd heard anything.
    expect(leader!.election.isLeader).toBe(false);
    const handoverMs = await msUntil(() => follower.election.isLeader, 1_000, 'the other router to supervise');
    await stopped;
    console.log(`supervisor election: handover after stop() in ${handoverMs} ms`);

    const newFence = follower.election.leaderFence()!;
    expect(newFence.createRevision).not.toBe(oldFence.createRevision);
    expect(await fencedPut(leader!.client, prefix, oldFence, 'by the deposed supervisor')).toBe(false);
    expect(await fencedPut(follower.client, prefix, newFence, 'by the new supervisor')).toBe(true);
    expect((await follower.client.get(`${prefix}pairs/0`).string()) ?? '').toBe('by the new supervisor');
    expect(follower.election.leaderId).toBe(follower.routerId);
    monitor.stop();
    expect(monitor.overlaps).toEqual([]);
  });

  it('a supervisor cut off from etcd steps down within half its lease, before another takes over within the lease', async () => {
    const prefix = newPrefix();
    const relay = await startRelay(etcd.endpoint);
    const doomed = newCandidate(prefix, 'router-cut-off', relay.endpoint);
    await doomed.election.start();
    await waitFor(() => doomed.election.isLeader, { timeoutMs: leaseTtlMs, what: 'the first router to supervise' });
    const other = newCandidate(prefix, 'router-other');
    await other.election.start();
    const monitor = watchForTwoLeaders([doomed, other]);
    await holdsFor(() => doomed.election.isLeader && !other.election.isLeader, leaseTtlMs, { what: 'the first router keeps supervising' });

    // Its process lives on and would act if it believed it still supervises.
    const cutMs = performance.now();
    relay.sever();
    const stepDownMs = await msUntil(() => !doomed.election.isLeader, leaseTtlMs / 2 + marginMs, 'the cut-off supervisor to step down');
    await waitFor(() => other.election.isLeader, {
      timeoutMs: leaseTtlMs + marginMs,
      intervalMs: 5,
      what: 'the other router to supervise',
    });
    const takeoverMs = Math.round(performance.now() - cutMs);
    console.log(
      `supervisor election: cut-off supervisor stepped down after ${stepDownMs} ms; the other took over ${takeoverMs} ms after the cut (TTL ${leaseTtlMs} ms)`,
    );
    expect(takeoverMs).toBeLessThan(leaseTtlMs + marginMs);
    expect(other.election.leaderId).toBe('router-other');
    monitor.stop();
    expect(monitor.overlaps).toEqual([]);
  });

  it('when the supervisor process is SIGKILLed another router takes over within the lease TTL', async () => {
    const prefix = newPrefix();
    const doomed = startChildCandidate(prefix, 'router-doomed');
    await waitFor(() => doomed.leader, { timeoutMs: 20_000, what: `the child to supervise: ${doomed.output.join('\n')}` });
    const survivor = newCandidate(prefix, 'router-survivor');
    await survivor.election.start();
    await holdsFor(() => !survivor.election.isLeader && doomed.leader, leaseTtlMs, { what: 'the child keeps supervising' });
    expect(survivor.election.leaderId).toBe('router-doomed');

    const exited = new Promise((resolve) => doomed.child.once('exit', resolve));
    const killedMs = performance.now();
    doomed.child.kill('SIGKILL');
    await exited;
    await waitFor(() => survivor.election.isLeader, { timeoutMs: leaseTtlMs + marginMs, intervalMs: 5, what: 'the survivor to supervise' });
    const takeoverMs = Math.round(performance.now() - killedMs);
    console.log(`supervisor election: SIGKILLed supervisor replaced after ${takeoverMs} ms (TTL ${leaseTtlMs} ms)`);
    expect(survivor.election.leaderId).toBe('router-survivor');
  });
});

describe('supervisor election when etcd dies', () => {
  it('with etcd SIGKILLed the supervisor steps down within the TTL, and after a restart exactly one supervises again', async () => {
    // An etcd of its own: the other tests keep theirs.
    const ownEtcd = new EtcdProcess({ dataDir: path.join(dataDir, 'etcd-killed') });
    await ownEtcd.start();
    cleanups.push(() => ownEtcd.stop());
    const prefix = newPrefix();
    const candidates = [newCandidate(prefix, 'router-a', ownEtcd.endpoint), newCandidate(prefix, 'router-b', ownEtcd.endpoint)];
    const monitor = watchForTwoLeaders(candidates);
    await Promise.all(candidates.map(({ election }) => election.start()));
    await waitFor(() => leadersOf(candidates).length === 1, { timeoutMs: leaseTtlMs, what: 'one supervisor' });

    const killedMs = performance.now();
    await ownEtcd.kill('SIGKILL');
    const stepDownMs = await msUntil(() => leadersOf(candidates).length === 0, leaseTtlMs, 'the supervisor to step down');
    // Nobody can be elected without etcd.
    await holdsFor(() => leadersOf(candidates).length === 0, leaseTtlMs, { what: 'no supervisor while etcd is down' });

    await ownEtcd.start();
    const restartedMs = performance.now();
    await waitFor(() => leadersOf(candidates).length === 1, { timeoutMs: 20_000, intervalMs: 5, what: 'one supervisor after the restart' });
    const recoveredMs = Math.round(performance.now() - restartedMs);
    await holdsFor(() => leadersOf(candidates).length === 1, leaseTtlMs, { what: 'exactly one supervisor after the restart' });
    console.log(
      `supervisor election: etcd SIGKILLed, supervisor stepped down after ${stepDownMs} ms (TTL ${leaseTtlMs} ms); one supervisor again ${recoveredMs} ms after etcd was healthy (down ${Math.round(restartedMs - killedMs)} ms)`,
    );
    const [leader] = leadersOf(candidates);
    const follower = candidates.find((candidate) => candidate !== leader)!;
    await waitFor(() => follower.election.leaderId === leader!.routerId, {
      timeoutMs: leaseTtlMs,
      what: 'the follower to name the supervisor',
    });
    monitor.stop();
    expect(monitor.overlaps).toEqual([]);
  });
});
