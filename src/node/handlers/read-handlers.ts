// The node's reads: shard totals, sketches, window sums, members, member
// counts and region components, answered from memory at the generations the
// router tagged them with. A read changes nothing, needs the whole log, and
// answers only what the follower confirmed while the pair is in sync.
import { ErrorCode, TallyError, isInt64 } from '../../wire/index.ts';
import { packComponents } from '../../wire/internal/index.ts';
import type { shardV1 } from '../../common/index.ts';
import { HllSketch } from '../../sketch/index.ts';
import { parseShardId } from '../write/index.ts';
import type { NodeContext } from './node-context.ts';
import type { LeanReadShardsRequest, ReadShardsAnswer } from '../../wire/internal/index.ts';

const emptyKey = Buffer.alloc(0);

export interface ReadHandlers {
  /** For the unary call and for each ReadShardsStream frame alike; ids and generations as numbers (read-shards-codec.ts). */
  readShards(request: LeanReadShardsRequest): Promise<ReadShardsAnswer>;
  readSketches(request: shardV1.ReadSketchesRequest__Output): Promise<shardV1.ReadSketchesResponse__Output>;
  readWindows(request: shardV1.ReadWindowsRequest__Output): Promise<shardV1.ReadShardsResponse__Output>;
  checkMembers(request: shardV1.CheckMembersRequest__Output): Promise<shardV1.CheckMembersResponse__Output>;
  memberCounts(request: shardV1.ReadShardsRequest__Output): Promise<shardV1.MemberCountsResponse__Output>;
  readComponents(request: shardV1.ReadShardsRequest__Output): Promise<shardV1.ReadComponentsResponse__Output>;
}

/** The read handlers over one node's context. A bad request throws before anything is read. */
export function createReadHandlers(context: NodeContext): ReadHandlers {
  const { memory, log, state } = context;
  const { totals } = memory;
  return {
    readShards(request) {
      context.requireWholeLog();
      const ids = request.shardIds.map(parseShardId);
      const { visible, newerGenerationIndexes } = context.generationsOf(ids, request.generations);
      const shardTotals = ids.map((id, index) => (visible(index) ? totals.get(id) : 0n));
      return context.confirmed({
        totals: shardTotals,
        newerGenerationIndexes,
        lsn: log.lastLsn,
        role: state.role.role,
        epoch: state.role.epoch,
        nodeId: log.nodeId,
      });
    },

    readSketches(request) {
      context.requireWholeLog();
      const ids = request.shardIds.map(parseShardId);
      const { visible, newerGenerationIndexes } = context.generationsOf(ids, request.generations);
      const sketchOf = (id: number, index: number): HllSketch | undefined => (visible(index) ? memory.sketch(id) : undefined);
      if (!request.merge)
        return context.confirmed({
          sketches: ids.map((id, index) => sketchOf(id, index)?.serialize() ?? emptyKey),
          newerGenerationIndexes,
          ...context.readMeta(),
        });
      const union = new HllSketch();
      ids.forEach((id, index) => {
        const sketch = sketchOf(id, index);
        if (sketch !== undefined) union.mergeFrom(sketch);
      });
      return context.confirmed({ sketches: [union.serialize()], newerGenerationIndexes, ...context.readMeta() });
    },

    readWindows(request) {
      context.requireWholeLog();
      const ids = request.shardIds.map(parseShardId);
      const fromMs = Number(request.fromMs);
      const toMs = Number(request.toMs);
      const bucketMs = Number(request.bucketMs);
      if (!Number.isSafeInteger(fromMs) || !Number.isSafeInteger(toMs) || fromMs > toMs)
        throw new TallyError(ErrorCode.invalidArgument, `bad window [${request.fromMs}, ${request.toMs})`);
      const { visible, newerGenerationIndexes } = context.generationsOf(ids, request.generations);
      const sums = ids.map((id, index) =>
        visible(index) && memory.windows.configOf(id)?.bucketMs === bucketMs ? memory.windows.sum(id, fromMs, toMs) : 0n,
      );
      // Buckets are int64 each, but a sum of several may not be: say so rather than wrap on the wire.
      if (!sums.every(isInt64)) throw new TallyError(ErrorCode.outOfRange, "a shard's window sum is beyond int64");
      return context.confirmed({ totals: sums.map(String), newerGenerationIndexes, ...context.readMeta() });
    },

    checkMembers(request) {
      context.requireWholeLog();
      if (request.shardIds.length !== request.members.length)
        throw new TallyError(ErrorCode.invalidArgument, 'shard ids and members differ in length');
      const ids = request.shardIds.map(parseShardId);
      const { visible, newerGenerationIndexes } = context.generationsOf(ids, request.generations);
      return context.confirmed({
        present: ids.map((id, index) => visible(index) && memory.hasMember(id, BigInt(request.members[index]!))),
        newerGenerationIndexes,
        ...context.readMeta(),
      });
    },

    memberCounts(request) {
      context.requireWholeLog();
      const ids = request.shardIds.map(parseShardId);
      return context.confirmed({
        memberCounts: ids.map((id) => String(memory.memberCount(id))),
        totals: ids.map((id) => totals.get(id).toString()),
        ...context.readMeta(),
      });
    },

    readComponents(request) {
      context.requireWholeLog();
      const ids = request.shardIds.map(parseShardId);
      return context.confirmed({
        components: ids.map((id) => packComponents(memory.componentsOf(id)?.values() ?? [])),
        ...context.readMeta(),
      });
    },
  };
}
