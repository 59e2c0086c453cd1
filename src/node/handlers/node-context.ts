// What every handler of the node's service checks before it acts, and what a
// read waits for before it answers: readiness, a whole log, the generations
// the router tagged a read with, and the follower's confirmation (G3). It
// reads the node's state and never changes it.
import { ErrorCode, TallyError } from '../../wire/index.ts';
import type { ShardLog } from '../log/index.ts';
import type { NodeMemory, NodeState } from '../state/index.ts';

/** The two things a read asks of the primary's replicator (Replicator). */
export interface ReadConfirmation {
  /** Why this primary may answer nothing now (its follower holds more of its epoch), or undefined. */
  refusal(): string | undefined;
  /** Resolves once the follower holds lsn; rejects after timeoutMs. */
  waitForAck(lsn: bigint, timeoutMs: number): Promise<void>;
}

export interface NodeContextDeps {
  state: NodeState;
  log: ShardLog;
  memory: NodeMemory;
  replicator: ReadConfirmation;
  /** How long a read waits for the follower to confirm what it answers. */
  replicationTimeoutMs: number;
}

/** Which shards of a read are visible at the generations it was tagged with, and which are newer. */
export interface ReadGenerations {
  visible: (index: number) => boolean;
  newerGenerationIndexes: number[];
}

export class NodeContext {
  readonly state: NodeState;
  readonly log: ShardLog;
  readonly memory: NodeMemory;

  constructor(private readonly deps: NodeContextDeps) {
    this.state = deps.state;
    this.log = deps.log;
    this.memory = deps.memory;
  }

  requireReady(): void {
    if (!this.state.ready) throw new TallyError(ErrorCode.unavailable, 'node is not ready (replaying its log or shutting down)');
  }

  /** Reads and reconciliation need the whole log: not while a snapshot install has emptied it. */
  requireWholeLog(): void {
    this.requireReady();
    if (this.log.installing)
      throw new TallyError(ErrorCode.unavailable, 'a snapshot install is under way: this node holds an incomplete log');
  }

  /**
   * Reads at the generations the router tagged each shard with (none: 0). A
   * shard at an older generation has not seen its counter's clear yet: it
   * reads as empty. One at a newer generation is named in
   * newerGenerationIndexes: a clear overtook the read, which the router
   * takes again, so a read never mixes cleared and uncleared shards.
   */
  generationsOf(ids: readonly number[], tagged: readonly (string | number | bigint)[]): ReadGenerations {
    const { memory } = this;
    if (tagged.length !== 0 && tagged.length !== ids.length)
      throw new TallyError(ErrorCode.invalidArgument, `${tagged.length} generations for ${ids.length} shards`);
    // The common case: no counter read was ever cleared, and no shard here was.
    if (tagged.length === 0 && memory.clearedShardCount === 0) return { visible: () => true, newerGenerationIndexes: [] };
    const visible: boolean[] = new Array(ids.length);
    const newerGenerationIndexes: number[] = [];
    ids.forEach((id, index) => {
      const wanted = tagged.length === 0 ? 0 : Number(tagged[index]);
      if (!Number.isSafeInteger(wanted) || wanted < 0)
        throw new TallyError(ErrorCode.invalidArgument, `generation ${tagged[index]} is invalid`);
      const held = memory.generationOf(id);
      visible[index] = held >= wanted;
      if (held > wanted) newerGenerationIndexes.push(index);
    });
    return { visible: (index) => visible[index]!, newerGenerationIndexes };
  }

  /** Where the node stood when it answered: the router checks an answer's role and epoch against its directory. */
  readMeta(): { lsn: string; role: string; epoch: string; nodeId: string } {
    const { log, state } = this;
    return { lsn: log.lastLsn.toString(), role: state.role.role, epoch: state.role.epoch.toString(), nodeId: log.nodeId };
  }

  /**
   * Reads answer only what a failover can no longer drop (G3: a total never
   * goes backwards). Values are taken now; while the pair is in sync the
   * answer waits until the follower holds everything up to now.
   */
  async confirmed<T>(values: T): Promise<T> {
    const { state, deps } = this;
    const refusal = state.role.role === 'primary' ? deps.replicator.refusal() : undefined;
    if (refusal !== undefined) throw new TallyError(ErrorCode.unavailable, refusal);
    if (state.role.role === 'primary' && state.role.syncRequired)
      await deps.replicator.waitForAck(this.log.lastLsn, deps.replicationTimeoutMs);
    return values;
  }
}
