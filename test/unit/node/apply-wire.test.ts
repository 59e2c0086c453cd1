// The Apply wire end to end in memory: what the router's NodeGroup encodes,
// through the real protobuf serializer, is what the node's decodeGroup hands
// group commit. Plain increments are summed per shard within a group (exactly,
// to int64), keyed ones stay items, and bad records fail the group alone.
import { describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { shardNodeServiceDefinition, type shardV1 } from '../../../src/common/index.ts';
import { INT64_MAX, INT64_MIN } from '../../../src/wire/index.ts';
import { NodeGroup, addInt64 } from '../../../src/router/write/node-group.ts';
import { decodeGroup } from '../../../src/node/write/request-decoding.ts';
import type { ApplyEntry, GroupOutcome } from '../../../src/node/write/group-commit.ts';
import { randomInt, seededRandom } from '../../helpers/seeded-random.ts';

const noWindow = { bucketMs: 0, retentionMs: 0 };

/** Through the serializer and back, as grpc-js carries it. */
function overTheWire(groups: shardV1.ApplyGroup[]): shardV1.ApplyRequest__Output {
  const apply = shardNodeServiceDefinition.Apply!;
  return apply.requestDeserialize(apply.requestSerialize({ epoch: '1', groups })) as shardV1.ApplyRequest__Output;
}

function decoded(group: NodeGroup): ApplyEntry[] {
  const result = decodeGroup(overTheWire([group.encode()]).groups[0]!);
  if (!Array.isArray(result)) throw new Error(`refused: ${result.message}`);
  return result;
}

function refused(records: Buffer, window: { bucketMs: number; retentionMs: number } = noWindow): GroupOutcome {
  const request = overTheWire([
    { items: [], increments: [{ records, windowBucketMs: window.bucketMs, windowRetentionMs: window.retentionMs }] },
  ]);
  const result = decodeGroup(request.groups[0]!);
  if (Array.isArray(result)) throw new Error('accepted');
  return result;
}

function record(shardId: bigint, amount: bigint): Buffer {
  const buffer = Buffer.alloc(16);
  buffer.writeBigUInt64LE(shardId, 0);
  buffer.writeBigInt64LE(amount, 8);
  return buffer;
}

describe('Apply wire: packed increments', () => {
  it('router: plain increments to one shard leave as one record carrying their exact sum; the node decodes that sum', () => {
    const group = new NodeGroup();
    group.addPlain(0, 0, 7, 5, noWindow);
    group.addPlain(1, 1, 9, -3, noWindow);
    group.addPlain(2, 0, 7, 2 ** 52, noWindow);
    group.addPlain(3, 0, 7, 2 ** 52, noWindow);
    const entries = decoded(group);
    expect(entries.map((entry) => [entry.shardId, entry.amount])).toEqual([
      [7, 5n + 2n ** 53n],
      [9, -3n],
    ]);
    expect(entries.every((entry) => entry.op === 'increment' && !entry.fence && entry.idempotencyKey.length === 0)).toBe(true);
    expect(group.plainIndexes).toEqual([0, 1, 2, 3]);
    expect(group.plainShardIndexes).toEqual([0, 1, 0, 0]);
  });

  it('router: a sum that would leave int64 starts a second record for the shard, so nothing wraps', () => {
    const group = new NodeGroup();
    group.addPlain(0, 0, 3, INT64_MAX, noWindow);
    group.addPlain(1, 0, 3, 1, noWindow);
    group.addPlain(2, 0, 3, INT64_MIN, noWindow);
    const entries = decoded(group);
    // Records in order of closing: INT64_MAX alone, then 1 + INT64_MIN.
    expect(entries.map((entry) => entry.amount)).toEqual([INT64_MAX, 1n + INT64_MIN]);
  });

  it('router: increments that cancel out send no record; keyed increments stay items after the records', () => {
    const group = new NodeGroup();
    group.addPlain(0, 0, 3, 4, noWindow);
    group.addPlain(1, 0, 3, -4, noWindow);
    group.addKeyed(2, 0, { shardId: 3, amount: 4, idempotencyKey: Buffer.from('k'), routedShardCount: 1 });
    const wire = group.encode();
    expect(wire.itemCount).toBe(1);
    const entries = decoded(group);
    expect(entries).toHaveLength(1);
    expect(entries[0]!.idempotencyKey.toString()).toBe('k');
  });

  it('router: each window setting travels once per run; the node gives every record its run’s window', () => {
    const window = { bucketMs: 60_000, retentionMs: 3_600_000 };
    const group = new NodeGroup();
    group.addPlain(0, 0, 1, 1, window);
    group.addPlain(1, 0, 2, 1, noWindow);
    expect(group.encode().increments).toHaveLength(2);
    const entries = decoded(group);
    expect(entries.find((entry) => entry.shardId === 1)!.window).toEqual(window);
    expect(entries.find((entry) => entry.shardId === 2)!.window).toBeUndefined();
  });

  it('router: a counter generation travels once per run (two counters at two generations: two runs); the node gives every record its run’s', () => {
    const group = new NodeGroup();
    group.addPlain(0, 0, 1, 1, noWindow, 3);
    group.addPlain(1, 0, 1, 1, noWindow, 3);
    group.addPlain(2, 0, 2, 1, noWindow, 0);
    group.addPlain(3, 0, 4, 1, noWindow, 3);
    const encoded = group.encode();
    expect(encoded.increments.map((run) => [run.generation ?? 0, run.records!.length / 16])).toEqual([
      [3, 2],
      [0, 1],
    ]);
    const entries = decoded(group);
    expect(entries.map((entry) => [entry.shardId, entry.amount, entry.generation])).toEqual([
      [1, 2n, 3],
      [4, 1n, 3],
      [2, 1n, 0],
    ]);
  });

  it('random amounts of every size decode exactly (seeded)', () => {
    const random = seededRandom(16);
    for (let round = 0; round < 200; round++) {
      const group = new NodeGroup();
      const expected = new Map<number, bigint>();
      for (let index = 0; index < 20; index++) {
        const shardId = 1 + randomInt(random, 0, 3) + (round % 2 === 0 ? 0 : 2 ** 40);
        const bits = randomInt(random, 0, 62);
        let amount = BigInt(Math.floor(random() * 2 ** 30)) << BigInt(Math.max(0, bits - 30));
        if (random() < 0.5) amount = -amount;
        if (amount === 0n) amount = 1n;
        const sum = (expected.get(shardId) ?? 0n) + amount;
        // Keep the expected sums inside int64 so each shard stays one record.
        if (sum > INT64_MAX || sum < INT64_MIN) continue;
        expected.set(shardId, sum);
        const exact = amount <= BigInt(Number.MAX_SAFE_INTEGER) && amount >= -BigInt(Number.MAX_SAFE_INTEGER);
        group.addPlain(index, 0, shardId, exact ? Number(amount) : amount, noWindow);
      }
      const got = new Map(decoded(group).map((entry) => [entry.shardId, entry.amount]));
      for (const [shardId, sum] of expected) if (sum !== 0n) expect(got.get(shardId)).toBe(sum);
      expect(got.size).toBe([...expected.values()].filter((sum) => sum !== 0n).length);
    }
  });

  it('node: a record of the wrong length, shard 0, a shard id beyond 2^53, amount 0 or a bad window fails the group INVALID_ARGUMENT', () => {
    expect(refused(Buffer.alloc(15)).code).toBe(status.INVALID_ARGUMENT);
    expect(refused(record(0n, 1n)).code).toBe(status.INVALID_ARGUMENT);
    expect(refused(record(2n ** 53n, 1n)).code).toBe(status.INVALID_ARGUMENT);
    expect(refused(record(1n, 0n)).code).toBe(status.INVALID_ARGUMENT);
    expect(refused(record(1n, 1n), { bucketMs: 1_500, retentionMs: 3_000 }).code).toBe(status.INVALID_ARGUMENT);
  });

  it('addInt64: numbers while exact, bigints beyond 2^53, undefined beyond int64', () => {
    expect(addInt64(1, 2)).toBe(3);
    expect(addInt64(Number.MAX_SAFE_INTEGER, 1)).toBe(2n ** 53n);
    expect(addInt64(2n ** 53n, -1)).toBe(Number.MAX_SAFE_INTEGER);
    expect(addInt64(INT64_MAX, 1)).toBeUndefined();
    expect(addInt64(INT64_MIN, -1)).toBeUndefined();
    expect(addInt64(INT64_MIN, INT64_MAX)).toBe(-1);
  });
});
