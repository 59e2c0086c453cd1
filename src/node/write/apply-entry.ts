// What group commit is asked and answers, per item and per group: the
// decoded form of an Apply group's items (request-decoding.ts makes them)
// and a group's outcome. Types only.
import type { RegionComponent, ShardComponent } from '../../wire/internal/index.ts';
import type { WindowSetting } from '../../wire/index.ts';
import type { LogEntry } from '../log/index.ts';

/**
 * What a router asks of one shard:
 *   increment     add amount (or, with fence, record the key at this shard, change nothing)
 *   memberSet     make member present or absent; logged only when that flips it
 *   distinct      raise sketch registers; logged only for registers that rise
 *   memberRepair  set the total to the member set's size (an operator's repair)
 *   drop          free the shard's state and keep its tombstone (its counter was deleted)
 *   clear         empty the shard and move it to `generation` (its counter was cleared)
 *   regionComponent  hold a peer region's component; logged only when its version is newer
 *   regionComponents  regionComponent for many shards in one entry (the rows whose version is newer)
 */
export type ApplyOp = 'increment' | 'memberSet' | 'distinct' | 'memberRepair' | 'drop' | 'clear' | 'regionComponent' | 'regionComponents';

export interface ApplyEntry extends LogEntry {
  op: ApplyOp;
  fence: boolean;
  /** The counter's shard count when the router routed this item (keyed items only). */
  routedShardCount: number;
  /** memberSet: the wanted state. */
  present?: boolean;
  /** distinct: (register index, rank) pairs to observe. */
  registers?: [number, number][];
  /** regionComponent: the peer region's component. */
  component?: RegionComponent;
  /** regionComponents: the peer regions' components, with the shard each goes to (the first is the item's shard). */
  packed?: ShardComponent[];
  /** increment: the counter's window setting ({0, 0}: none). */
  window?: WindowSetting;
  /**
   * increment, memberSet, distinct: the counter's generation when the router
   * routed the item (0 or absent: never cleared); clear: the generation to clear to.
   */
  generation?: number;
  /** drop, clear: set when the flush commits it: true when this item dropped (cleared) the shard, false when it already was. */
  lifecycleApplied?: boolean;
}

export interface GroupOutcome {
  code: number;
  message: string;
  applied: boolean[];
  /** Per item: registers raised (distinct), 1 or 0 (memberSet), the correction made (memberRepair); empty for a group of increments only. */
  changed: string[];
}
