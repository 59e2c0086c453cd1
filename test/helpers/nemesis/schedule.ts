// Seeded schedules: a seed draws faults over the cluster's hosts and processes,
// which run one after another under load, each held then healed; then every
// fault is undone, the cluster gets a quiet period to recover, the load stops,
// final exact reads are taken through every router and the history is checked.
// The same seed draws the same schedule (timing aside): TALLY_NEMESIS_SEED reruns it.
import { pause, waitFor } from '../cluster.ts';
import { randomInt, seededRandom } from '../seeded-random.ts';
import type { LoadOptions } from './client/index.ts';
import { checkHistory, machineMonotonicMs, type Operation, type Violation } from './check/index.ts';
import type { NemesisCluster } from './cluster.ts';
import { anyStatus, applyFault, describeFault, faultKinds, type ActiveFault, type FaultKind, type FaultSpec } from './faults.ts';
import type { CutMode } from './hosts/index.ts';

/** A fault, or how to pick one from the cluster as it is now (the current primary, the supervisor). */
export type FaultChoice = FaultSpec | ((cluster: NemesisCluster) => Promise<FaultSpec>);

export interface ScheduleStep {
  /** Applied in order, staggerMs apart; held together for holdMs after the last; healed in reverse order. */
  faults: FaultChoice[];
  staggerMs?: number;
  holdMs: number;
  /** Time after the heal before the next step: the cluster's chance to recover (measured). */
  gapMs: number;
}

export interface Schedule {
  /** The seed that drew it, or a scenario's name. */
  name: string;
  seed: number;
  counters: string[];
  steps: ScheduleStep[];
}

export interface ScheduleShape {
  faultCount: number;
  holdMs: [number, number];
  gapMs: number;
  /** A pause lasts longer than this (the routers' lease TTL) plus a second. */
  leaseMs: number;
  /** Kinds drawn (default every kind the harness implements). */
  kinds?: readonly FaultKind[];
  counterCount?: number;
}

/** Host and process names of the cluster: what faults are drawn over. */
export interface Topology {
  etcd: string[];
  nodes: string[];
  routers: string[];
  client: string;
}

export function topologyOf(cluster: NemesisCluster): Topology {
  return {
    etcd: cluster.byRole('etcd').map((member) => member.name),
    nodes: cluster.byRole('node').map((member) => member.name),
    routers: cluster.byRole('router').map((member) => member.name),
    client: 'client',
  };
}

function shuffled<T>(random: () => number, items: readonly T[]): T[] {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index--) {
    const other = randomInt(random, 0, index);
    [copy[index], copy[other]] = [copy[other]!, copy[index]!];
  }
  return copy;
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[randomInt(random, 0, items.length - 1)]!;

/** Two non-empty disjoint groups from the hosts, in random order and sizes. */
function split(random: () => number, hosts: readonly string[]): [string[], string[]] {
  const order = shuffled(random, hosts);
  const at = randomInt(random, 1, order.length - 1);
  return [order.slice(0, at), order.slice(at)];
}

function drawFault(random: () => number, kind: FaultKind, topology: Topology): FaultSpec {
  const servers = [...topology.etcd, ...topology.nodes, ...topology.routers];
  const everyHost = [...servers, topology.client];
  const mode: CutMode = random() < 0.5 ? 'drop' : 'reject';
  switch (kind) {
    case 'partition':
      return { kind, sides: split(random, everyHost), mode };
    case 'partition-one-way': {
      const [from, rest] = split(random, servers);
      return { kind, from: from.slice(0, 3), to: shuffled(random, rest).slice(0, randomInt(random, 1, 3)), mode };
    }
    case 'isolate':
    case 'blackhole':
      return { kind, host: pick(random, servers) };
    case 'bridge': {
      const bridge = pick(random, servers);
      return {
        kind,
        bridge,
        sides: split(
          random,
          everyHost.filter((host) => host !== bridge),
        ),
        mode,
      };
    }
    case 'pause':
      return { kind, process: pick(random, servers) };
    case 'clock-step': {
      // An NTP-sized step (tens of seconds) or an hour or two, either way.
      const sizeMs = random() < 0.5 ? randomInt(random, 10, 90) * 1_000 : randomInt(random, 60, 120) * 60_000;
      return { kind, process: pick(random, [...topology.nodes, ...topology.routers]), offsetMs: random() < 0.5 ? sizeMs : -sizeMs };
    }
    case 'kill':
      return { kind, process: pick(random, servers) };
    case 'wipe':
      return { kind, process: pick(random, topology.nodes) };
    case 'torn-write':
      return { kind, process: pick(random, topology.nodes) };
    case 'corrupt-page':
      return { kind, process: pick(random, topology.nodes), seed: randomInt(random, 1, 1_000_000) };
    case 'mid-frame-kill':
      return { kind, process: pick(random, topology.nodes) };
    case 'flipped-value':
      return { kind, process: pick(random, topology.nodes) };
    case 'restored-copy':
      return { kind, process: pick(random, topology.nodes) };
  }
}

/** Every kind is drawn by seeded schedules. */
export const drawableFaultKinds: readonly FaultKind[] = faultKinds;

/** Faults that lose a node's disk, or part of it: the node is refilled from its partner. */
const diskFaultKinds: ReadonlySet<FaultKind> = new Set(['wipe', 'torn-write', 'corrupt-page', 'flipped-value', 'restored-copy']);

/** The other node of a node's pair, by the cluster's naming (n<pair>a, n<pair>b). */
function partnerOf(node: string): string {
  return node.endsWith('a') ? `${node.slice(0, -1)}b` : `${node.slice(0, -1)}a`;
}

/** The schedule a seed draws: a pure function of the seed, the topology and the shape. */
export function drawSchedule(seed: number, topology: Topology, shape: ScheduleShape): Schedule {
  const random = seededRandom(seed);
  const kinds = shape.kinds ?? drawableFaultKinds;
  // Both disks of a pair lost one after the other, the second before the
  // first was refilled, loses what only they held: not a fault Tally
  // survives (G1 assumes one lost disk at a time), so never drawn.
  let lastDamagedNode: string | undefined;
  const steps: ScheduleStep[] = Array.from({ length: shape.faultCount }, () => {
    let spec = drawFault(random, pick(random, kinds), topology);
    if (diskFaultKinds.has(spec.kind) && 'process' in spec && lastDamagedNode !== undefined && spec.process === partnerOf(lastDamagedNode))
      spec = { ...spec, process: lastDamagedNode };
    lastDamagedNode = diskFaultKinds.has(spec.kind) && 'process' in spec ? spec.process : undefined;
    let holdMs = randomInt(random, shape.holdMs[0], shape.holdMs[1]);
    if (spec.kind === 'pause') holdMs = Math.max(holdMs, shape.leaseMs + 1_000);
    return { faults: [spec], holdMs, gapMs: shape.gapMs };
  });
  const counters = Array.from({ length: shape.counterCount ?? 4 }, (_, index) => `s${seed}-c${index}`);
  return { name: `seed ${seed}`, seed, counters, steps };
}

export function describeSchedule(schedule: Schedule): string {
  return [
    `${schedule.name} (seed ${schedule.seed}): counters ${schedule.counters.join(', ')}`,
    ...schedule.steps.map(
      (step, index) =>
        `  ${index + 1}. ${step.faults.map((fault) => (typeof fault === 'function' ? '(picked at run time)' : describeFault(fault))).join(' + ')} for ${step.holdMs} ms, then ${step.gapMs} ms`,
    ),
  ].join('\n');
}

/** A fault as it ran: its times on the machine's monotonic clock. */
export interface FaultRecord {
  spec: FaultSpec;
  description: string;
  appliedMs: number;
  healedMs: number;
  /** When the next fault was applied, or the quiet period began: the window its recovery is measured in. */
  windowEndMs: number;
  /** A fault that could not be applied or healed (a process that would not restart is a finding). */
  error?: string;
}

export interface ScheduleResult {
  schedule: Schedule;
  faults: FaultRecord[];
  operations: Operation[];
  violations: Violation[];
  /** From the last heal to full service (every node serving and in sync, a keyed write and exact reads through every router); undefined: never within the quiet period. */
  recoveredAfterMs: number | undefined;
  /** What was still missing when the quiet period ran out. */
  missingService?: string;
  startedMs: number;
  endedMs: number;
}

export interface RunOptions {
  load?: Partial<LoadOptions>;
  /** How long the cluster gets to reach full service after the last heal. */
  quietTimeoutMs?: number;
  /** Load before the first fault. */
  warmupMs?: number;
  log?: (line: string) => void;
}

/** Names of the primary and follower of a pair now, through any router that answers. */
export async function pairMembers(cluster: NemesisCluster, pairIndex: number): Promise<{ primary: string; follower: string }> {
  const status = await anyStatus(cluster);
  const pair = status.pairs.find((candidate) => candidate.pair === pairIndex);
  if (pair === undefined) throw new Error(`no pair ${pairIndex}`);
  return { primary: cluster.nodeNameAt(pair.primary)!, follower: cluster.nodeNameAt(pair.follower)! };
}

/** The router holding the supervisor lease now. */
export async function supervisorName(cluster: NemesisCluster): Promise<string> {
  return waitFor(async () => (await anyStatus(cluster)).supervisor, { timeoutMs: 15_000, what: 'a supervisor' });
}

/** Every fault undone whatever the schedule did: cuts removed, clocks back, paused processes resumed, stopped ones started. */
export async function healEverything(cluster: NemesisCluster): Promise<string[]> {
  const problems: string[] = [];
  cluster.network.healAll();
  for (const member of cluster.processes.values()) {
    member.clock?.setOffsetMs(0);
    if (member.process.isPaused) member.process.resume();
  }
  await Promise.all(
    [...cluster.processes.values()]
      .filter((member) => !member.process.running)
      .map((member) =>
        member.process.start().catch((error: unknown) => {
          problems.push(`${member.name} did not start again: ${(error as Error).message}`);
        }),
      ),
  );
  return problems;
}

/**
 * Full service: every node serving and in sync by every router, a supervisor,
 * and through every router a keyed write and an exact read of every counter.
 * Returns what is missing ('' when nothing).
 */
async function missingService(cluster: NemesisCluster, counters: readonly string[], probe: string): Promise<string> {
  const routerCount = cluster.byRole('router').length;
  // Every router's view, not the first complaint only: two routers that disagree are the finding.
  const views: string[] = [];
  for (let router = 0; router < routerCount; router++) {
    const status = await cluster.client.status(router).catch((error: unknown) => error as Error);
    if (status instanceof Error) {
      views.push(`r${router + 1} status: ${status.message}`);
      continue;
    }
    if (status.supervisor === '') views.push(`r${router + 1} sees no supervisor`);
    const unwell = status.nodes.filter((node) => node.health !== 'SERVING' || !node.inSync || node.error !== '');
    if (unwell.length > 0)
      views.push(
        `r${router + 1} (supervisor ${status.supervisor}): ${unwell.map((node) => `${cluster.nodeNameAt(node.address)} ${node.role} ${node.health} inSync=${node.inSync} epoch=${node.epoch} ${node.error}`).join('; ')}`,
      );
  }
  if (views.length > 0) return views.join(' | ');
  for (let router = 0; router < routerCount; router++) {
    const write = await cluster.client.increment(router, counters[0]!, 1n, { key: `${probe}-r${router}`, deadlineMs: 2_000 });
    if (write.outcome !== 'ok') return `r${router + 1} keyed write: ${write.error}`;
    for (const counter of counters) {
      const read = await cluster.client.read(router, counter, { deadlineMs: 2_000 });
      if (read.outcome !== 'ok') return `r${router + 1} exact read of ${counter}: ${read.error}`;
    }
  }
  return '';
}

/** Runs a schedule on a running cluster and checks its history (the logs are compared once the cluster stops). */
export async function runSchedule(cluster: NemesisCluster, schedule: Schedule, options: RunOptions = {}): Promise<ScheduleResult> {
  const log = options.log ?? (() => undefined);
  const startedMs = machineMonotonicMs();
  cluster.client.resetHistory();
  const load: LoadOptions = {
    counters: schedule.counters,
    writersPerRouter: 3,
    readShare: 0.25,
    keyedShare: 0.35,
    duplicateShare: 0.05,
    deadlineMs: 2_000,
    pauseMs: 15,
    keyPrefix: `${schedule.name.replace(/\s+/g, '')}-`,
    seed: schedule.seed,
    ...options.load,
  };
  await cluster.client.startLoad(load);
  await pause(options.warmupMs ?? 1_000);
  const faults: FaultRecord[] = [];
  for (const step of schedule.steps) {
    const active: { fault: ActiveFault; record: FaultRecord }[] = [];
    for (const [index, choice] of step.faults.entries()) {
      if (index > 0) await pause(step.staggerMs ?? 0);
      let spec: FaultSpec | undefined;
      const record: FaultRecord = {
        spec: { kind: 'pause', process: '?' },
        description: '?',
        appliedMs: machineMonotonicMs(),
        healedMs: 0,
        windowEndMs: 0,
      };
      try {
        spec = typeof choice === 'function' ? await choice(cluster) : choice;
        record.spec = spec;
        record.description = describeFault(spec);
        record.appliedMs = machineMonotonicMs();
        const fault = await applyFault(cluster, spec);
        // A disk fault on a pair out of sync is applied as a kill (faults.ts): the record says what ran.
        if (fault.spec !== spec) {
          record.description = `${describeFault(fault.spec)} (was ${record.description}: its pair was out of sync)`;
          record.spec = fault.spec;
        }
        active.push({ fault, record });
        log(`apply ${record.description}`);
      } catch (error) {
        record.error = `apply: ${(error as Error).message}`;
        log(`could not apply ${record.description}: ${(error as Error).message}`);
        record.healedMs = machineMonotonicMs();
      }
      faults.push(record);
    }
    await pause(step.holdMs);
    for (const { fault, record } of active.reverse()) {
      try {
        await fault.heal();
      } catch (error) {
        record.error = `heal: ${(error as Error).message.split('\n')[0]}`;
        log(`heal of ${record.description} failed: ${record.error}`);
      }
      record.healedMs = machineMonotonicMs();
      log(`healed ${record.description}`);
    }
    // After the last step the quiet period starts at once: its time to full service is measured from the heal.
    if (step !== schedule.steps[schedule.steps.length - 1]) await pause(step.gapMs);
  }
  const quietFromMs = machineMonotonicMs();
  for (const problem of await healEverything(cluster)) log(problem);
  let recoveredAfterMs: number | undefined;
  let missing = '';
  const lastHealMs = faults.length === 0 ? quietFromMs : Math.max(...faults.map((record) => record.healedMs));
  try {
    let probe = 0;
    await waitFor(
      async () => {
        missing = await missingService(cluster, schedule.counters, `${load.keyPrefix}probe${probe++}`);
        return missing === '';
      },
      { timeoutMs: options.quietTimeoutMs ?? 30_000, intervalMs: 200, what: 'full service after the heal' },
    );
    recoveredAfterMs = machineMonotonicMs() - lastHealMs;
  } catch {
    log(`no full service within the quiet period: ${missing}`);
  }
  // The last fault's recovery window is the quiet period, up to full service.
  const quietEndMs = machineMonotonicMs();
  for (const [index, record] of faults.entries()) record.windowEndMs = faults[index + 1]?.appliedMs ?? quietEndMs;
  await cluster.client.stopLoad();
  const routerCount = cluster.byRole('router').length;
  for (const counter of schedule.counters) {
    for (let router = 0; router < routerCount; router++) {
      // A few tries: one failed read after recovery is a liveness note, not the end of the check.
      for (let attempt = 0; attempt < 3; attempt++) {
        if ((await cluster.client.read(router, counter, { final: true, deadlineMs: 3_000 })).outcome === 'ok') break;
        await pause(500);
      }
    }
  }
  const operations = cluster.client.history.operations.slice();
  return {
    schedule,
    faults,
    operations,
    violations: checkHistory(operations),
    recoveredAfterMs,
    ...(recoveredAfterMs === undefined ? { missingService: missing } : {}),
    startedMs,
    endedMs: machineMonotonicMs(),
  };
}
