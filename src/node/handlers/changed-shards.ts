// ChangedShards: the region publisher's feed of shard totals changed since a
// position this node gave (docs/regions.md). Values are taken in one turn and
// answered through the node's confirmed() wait, exactly as ReadShards: an
// answer never holds what a failover could still drop. It never writes.
import { ErrorCode, TallyError } from '../../wire/index.ts';
import { encodeShardColumns } from '../../wire/internal/index.ts';
import { regionFeedRingEntries, regionFeedShardsMax, type shardV1 } from '../../common/index.ts';
import type { ShardLog } from '../log/index.ts';
import type { NodeMemory, NodeState } from '../state/index.ts';

/** Bytes of a feed id a caller may send (ids this node makes are 36). */
const feedIdBytesMax = 64;

export interface ChangedShardsDeps {
  memory: NodeMemory;
  log: ShardLog;
  state: NodeState;
  requireWholeLog: () => void;
  confirmed: <T>(values: T) => Promise<T>;
}

function count(value: string | number, name: string): number {
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 0) throw new TallyError(ErrorCode.invalidArgument, `${name} ${value} is invalid`);
  return parsed;
}

/** The shards this memory holds any total or generation for, ascending, above `afterShardId`. */
function heldShardsAfter(memory: NodeMemory, afterShardId: number): number[] {
  const held = new Set<number>(memory.totals.shardIds());
  for (const shardId of memory.clearedShardIds()) held.add(shardId);
  return [...held].filter((shardId) => shardId > afterShardId).sort((a, b) => a - b);
}

export function createChangedShards(deps: ChangedShardsDeps) {
  const { memory, log, state } = deps;
  return (request: shardV1.ChangedShardsRequest__Output): Promise<shardV1.ChangedShardsResponse__Output> => {
    deps.requireWholeLog();
    if (Buffer.byteLength(request.feedId) > feedIdBytesMax)
      throw new TallyError(ErrorCode.invalidArgument, `feed id is longer than ${feedIdBytesMax} bytes`);
    const sinceSeq = count(request.sinceSeq, 'since_seq');
    const fullAfterShardId = count(request.fullAfterShardId, 'full_after_shard_id');
    const shardsMax = request.shardsMax;
    if (!Number.isSafeInteger(shardsMax) || shardsMax < 1 || shardsMax > regionFeedShardsMax)
      throw new TallyError(ErrorCode.invalidArgument, `shards_max ${shardsMax} is outside 1..${regionFeedShardsMax}`);
    const { feed, started } = memory.changeFeed(regionFeedRingEntries);
    // The caller's position means something only in this feed, and only while the ring still holds what followed it.
    const known = !started && request.feedId === feed.id && feed.knows(sinceSeq);
    let shardIds: number[];
    let seq: number;
    let more: boolean;
    let full: boolean;
    let pageAfter = 0;
    if (known && fullAfterShardId === 0) {
      ({ shardIds, seq, more } = feed.changedSince(sinceSeq, shardsMax));
      full = false;
    } else {
      // Everything, in pages by shard id; a page continues a full answer of this feed, or a new one starts.
      full = true;
      pageAfter = known ? fullAfterShardId : 0;
      const held = heldShardsAfter(memory, pageAfter);
      more = held.length > shardsMax;
      shardIds = more ? held.slice(0, shardsMax) : held;
      seq = feed.seq;
    }
    const columns = encodeShardColumns({
      shardIds: Float64Array.from(shardIds),
      totals: BigInt64Array.from(shardIds, (shardId) => memory.totals.get(shardId)),
      generations: Uint32Array.from(shardIds, (shardId) => memory.generationOf(shardId)),
    });
    return deps.confirmed({
      feedId: feed.id,
      seq: String(seq),
      full,
      more,
      fullAfterShardId: String(pageAfter),
      ...columns,
      lsn: log.lastLsn.toString(),
      role: state.role.role,
      epoch: state.role.epoch.toString(),
      nodeId: log.nodeId,
    });
  };
}
