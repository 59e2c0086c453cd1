// The faults, each a plain description (a schedule is a list of them, printable
// and replayable) and the code that applies it and returns its heal. Network
// faults are iptables cuts between hosts; process faults are signals, a stepped
// wall clock, a restart or a lost disk. Nothing here decides when: schedule.ts does.
import fs from 'node:fs';
import { corruptLogPage, moveStoredValue, tearWal } from '../log-damage.ts';
import type { NemesisCluster } from './cluster.ts';
import type { CutMode, Host } from './hosts/index.ts';

export type FaultSpec =
  /** Two groups of hosts cannot reach each other, both ways. */
  | { kind: 'partition'; sides: [string[], string[]]; mode: CutMode }
  /** Packets from `from` are not delivered to `to`; the other way works. */
  | { kind: 'partition-one-way'; from: string[]; to: string[]; mode: CutMode }
  /** One host cut from every other, connections refused at once (reject). */
  | { kind: 'isolate'; host: string }
  /** One host sees both sides; the sides do not see each other. */
  | { kind: 'bridge'; bridge: string; sides: [string[], string[]]; mode: CutMode }
  /** One host's packets, in and out, silently dropped: every peer waits out its timeouts. */
  | { kind: 'blackhole'; host: string }
  /** SIGSTOP until the heal (SIGCONT): longer than any lease or timeout when the schedule says so. */
  | { kind: 'pause'; process: string }
  /** The process's wall clock stepped by offsetMs (monotonic untouched); the heal steps it back to real time. */
  | { kind: 'clock-step'; process: string; offsetMs: number }
  /** SIGKILL; the heal starts it again on its data. */
  | { kind: 'kill'; process: string }
  /** SIGKILL and the node's data directory deleted; the heal starts it empty. */
  | { kind: 'wipe'; process: string }
  /** SIGKILL, then the node's write-ahead file cut mid-frame some commits from its end; the heal starts it (it must refuse the log and be refilled). */
  | { kind: 'torn-write'; process: string }
  /** SIGKILL, then bytes overwritten in a leaf page of the node's log; the heal starts it (likewise). */
  | { kind: 'corrupt-page'; process: string; seed: number }
  /** A node SIGKILLed by its LD_PRELOAD shim between a write-ahead frame's header and its page (a commit cut short); the heal starts it on its log. */
  | { kind: 'mid-frame-kill'; process: string }
  /** SIGKILL, then a stored value moved in the node's log (its checksum fails); the heal starts it (it refuses the log at replay and is refilled). */
  | { kind: 'flipped-value'; process: string }
  /**
   * A copy of the node's disk taken, writes acknowledged after it for a
   * second, then the node SIGKILLed and the copy put back (same identity, a
   * shorter log), and the supervising router SIGKILLed with it (its memory of
   * what was confirmed lost); the heal starts both. A primary must step down.
   */
  | { kind: 'restored-copy'; process: string };

export type FaultKind = FaultSpec['kind'];

/** Every kind, in report order. */
export const faultKinds: readonly FaultKind[] = [
  'partition',
  'partition-one-way',
  'isolate',
  'bridge',
  'blackhole',
  'pause',
  'clock-step',
  'kill',
  'wipe',
  'torn-write',
  'corrupt-page',
  'mid-frame-kill',
  'flipped-value',
  'restored-copy',
];

/** Commits a torn write cuts from the end of the write-ahead file (fewer when it holds fewer). */
const tornCommits = 20;

export interface ActiveFault {
  spec: FaultSpec;
  heal(): Promise<void>;
}

const list = (names: readonly string[]): string => names.join(',');

export function describeFault(spec: FaultSpec): string {
  switch (spec.kind) {
    case 'partition':
      return `partition {${list(spec.sides[0])}} from {${list(spec.sides[1])}} (${spec.mode})`;
    case 'partition-one-way':
      return `one-way {${list(spec.from)}} -> {${list(spec.to)}} lost (${spec.mode})`;
    case 'isolate':
      return `isolate ${spec.host}`;
    case 'bridge':
      return `bridge ${spec.bridge} between {${list(spec.sides[0])}} and {${list(spec.sides[1])}} (${spec.mode})`;
    case 'blackhole':
      return `blackhole ${spec.host}`;
    case 'pause':
      return `pause ${spec.process}`;
    case 'clock-step':
      return `clock ${spec.process} ${spec.offsetMs >= 0 ? '+' : ''}${Math.round(spec.offsetMs / 1000)} s`;
    default:
      return `${spec.kind} ${spec.process}`;
  }
}

let cutSequence = 0;

function cutBothWays(cluster: NemesisCluster, name: string, left: Host[], right: Host[], mode: CutMode): void {
  cluster.network.cut(name, left, right, mode);
  cluster.network.cut(name, right, left, mode);
}

/** ClusterStatus through the first router that answers. */
export async function anyStatus(cluster: NemesisCluster): ReturnType<NemesisCluster['client']['status']> {
  const routerCount = cluster.byRole('router').length;
  let lastError: unknown;
  for (let router = 0; router < routerCount; router++) {
    try {
      return await cluster.client.status(router);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

/**
 * Tally survives one lost or damaged disk while the pair's other node holds
 * its history (G1): a disk fault on a pair out of sync (its partner behind,
 * after an earlier fault) would be a second fault at once, and is applied as
 * a kill instead (the record says so). Unknown (no router answers): a kill.
 */
async function pairInSync(cluster: NemesisCluster, pairIndex: number | undefined): Promise<boolean> {
  const status = await anyStatus(cluster).catch(() => undefined);
  return status?.pairs.find((pair) => pair.pair === pairIndex)?.inSync === true;
}

/** Applies the fault now; the returned heal undoes it (and is safe to call once). A disk fault may run as a kill (see pairInSync): the result's spec says. */
export async function applyFault(cluster: NemesisCluster, spec: FaultSpec): Promise<ActiveFault> {
  const network = cluster.network;
  const hosts = (names: readonly string[]): Host[] => names.map((name) => network.host(name));
  const everyHostBut = (name: string): Host[] => [...network.hosts.values()].filter((host) => host.name !== name);
  const cutName = `${spec.kind}-${cutSequence++}`;
  const healCut = async (): Promise<void> => network.heal(cutName);
  switch (spec.kind) {
    case 'partition':
      cutBothWays(cluster, cutName, hosts(spec.sides[0]), hosts(spec.sides[1]), spec.mode);
      return { spec, heal: healCut };
    case 'partition-one-way':
      network.cut(cutName, hosts(spec.from), hosts(spec.to), spec.mode);
      return { spec, heal: healCut };
    case 'isolate':
    case 'blackhole':
      cutBothWays(cluster, cutName, hosts([spec.host]), everyHostBut(spec.host), spec.kind === 'isolate' ? 'reject' : 'drop');
      return { spec, heal: healCut };
    case 'bridge':
      cutBothWays(cluster, cutName, hosts(spec.sides[0]), hosts(spec.sides[1]), spec.mode);
      return { spec, heal: healCut };
    case 'pause': {
      const member = cluster.member(spec.process);
      member.process.pause();
      return { spec, heal: async () => member.process.resume() };
    }
    case 'clock-step': {
      const clock = cluster.member(spec.process).clock;
      if (clock === undefined) throw new Error(`${spec.process} has no steppable clock (only routers and nodes do)`);
      clock.setOffsetMs(clock.offsetMs() + spec.offsetMs);
      return { spec, heal: async () => clock.setOffsetMs(0) };
    }
    case 'kill': {
      const member = cluster.member(spec.process);
      await member.process.kill();
      return { spec, heal: () => member.process.start() };
    }
    case 'wipe': {
      const member = cluster.member(spec.process);
      if (!(await pairInSync(cluster, member.pairIndex))) return applyFault(cluster, { kind: 'kill', process: spec.process });
      await cluster.wipe(spec.process);
      return { spec, heal: () => member.process.start() };
    }
    case 'mid-frame-kill': {
      const member = cluster.member(spec.process);
      if (member.role !== 'node' || member.midFrameArm === undefined) throw new Error(`${spec.kind} is for nodes, not ${spec.process}`);
      fs.writeFileSync(member.midFrameArm, '');
      // Its next commit kills it; an idle node may commit nothing for a while: then a plain kill stands.
      const deadline = performance.now() + 5_000;
      while (member.process.running && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      fs.rmSync(member.midFrameArm, { force: true });
      if (member.process.running) await member.process.kill();
      return { spec, heal: () => member.process.start() };
    }
    case 'flipped-value': {
      const member = cluster.member(spec.process);
      if (!(await pairInSync(cluster, member.pairIndex))) return applyFault(cluster, { kind: 'kill', process: spec.process });
      if (member.role !== 'node') throw new Error(`${spec.kind} is for nodes, not ${spec.process}`);
      await member.process.kill();
      moveStoredValue(member.dataDir);
      // Replay finds the damage and the node exits (3) marking its log; the next start sets it aside.
      return { spec, heal: () => member.process.start().catch(() => member.process.start()) };
    }
    case 'restored-copy': {
      const member = cluster.member(spec.process);
      if (!(await pairInSync(cluster, member.pairIndex))) return applyFault(cluster, { kind: 'kill', process: spec.process });
      if (member.role !== 'node') throw new Error(`${spec.kind} is for nodes, not ${spec.process}`);
      const copyDir = `${member.dataDir}.copy`;
      // A consistent copy: the process paused between writes (a cut-short commit at its end is discarded at start).
      member.process.pause();
      try {
        fs.rmSync(copyDir, { recursive: true, force: true });
        fs.cpSync(member.dataDir, copyDir, { recursive: true });
      } finally {
        member.process.resume();
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const supervisorName = (await anyStatus(cluster).catch(() => undefined))?.supervisor;
      const supervisor = supervisorName === undefined || supervisorName === '' ? undefined : cluster.processes.get(supervisorName);
      await Promise.all([member.process.kill(), supervisor?.process.kill()]);
      fs.rmSync(member.dataDir, { recursive: true, force: true });
      fs.renameSync(copyDir, member.dataDir);
      return {
        spec,
        heal: async () => {
          await member.process.start();
          if (supervisor !== undefined && !supervisor.process.running) await supervisor.process.start();
        },
      };
    }
    case 'torn-write':
    case 'corrupt-page': {
      const member = cluster.member(spec.process);
      if (!(await pairInSync(cluster, member.pairIndex))) return applyFault(cluster, { kind: 'kill', process: spec.process });
      if (member.role !== 'node') throw new Error(`${spec.kind} is for nodes, not ${spec.process}`);
      await member.process.kill();
      // A log with nothing to tear (all folded) is left whole: the kill alone stands.
      if (spec.kind === 'torn-write') tearWal(member.dataDir, tornCommits);
      else corruptLogPage(member.dataDir, spec.seed);
      return { spec, heal: () => member.process.start() };
    }
  }
}
