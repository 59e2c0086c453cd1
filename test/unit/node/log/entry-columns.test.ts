// Unit tests for the columnar AppendEntries block: every kind round-trips,
// and a block that is cut, padded or holds an invalid entry is refused whole.
import { describe, expect, it } from 'vitest';
import { decodeEntryColumns, encodeEntryColumns, columnsBytes } from '../../../../src/node/log/records/entry-columns.ts';
import { EntryKind, encodeGeneration, type StoredEntry } from '../../../../src/node/log/index.ts';
import { encodeWindowSetting } from '../../../../src/node/state/node-memory.ts';
import { packRegisterChanges } from '../../../../src/sketch/index.ts';
import { ErrorCode, TallyError, INT64_MAX, INT64_MIN, UINT64_MAX } from '../../../../src/wire/index.ts';

const noKey = Buffer.alloc(0);

function sample(): StoredEntry[] {
  const at = (lsn: bigint, epoch: bigint) => ({ lsn, epoch, atMs: 1_700_000_000_123 + Number(lsn) });
  return [
    { ...at(41n, 2n), shardId: 1, amount: INT64_MAX, idempotencyKey: noKey, fenceShardCount: 0 },
    { ...at(42n, 2n), shardId: 2 ** 40, amount: INT64_MIN, idempotencyKey: Buffer.from('key-1'), fenceShardCount: 0 },
    { ...at(43n, 3n), shardId: 3, amount: 0n, idempotencyKey: Buffer.from('fenced'), fenceShardCount: 7 },
    { ...at(44n, 3n), shardId: 4, amount: -1n, idempotencyKey: noKey, fenceShardCount: 0, kind: EntryKind.memberFlip, member: UINT64_MAX },
    {
      ...at(45n, 3n),
      shardId: 5,
      amount: 0n,
      idempotencyKey: noKey,
      fenceShardCount: 0,
      kind: EntryKind.distinct,
      payload: packRegisterChanges([[3, 9]]),
    },
    {
      ...at(46n, 3n),
      shardId: 6,
      amount: 0n,
      idempotencyKey: noKey,
      fenceShardCount: 0,
      kind: EntryKind.windowConfig,
      payload: encodeWindowSetting({ bucketMs: 1_000, retentionMs: 60_000 }),
    },
    { ...at(47n, 3n), shardId: 7, amount: 0n, idempotencyKey: noKey, fenceShardCount: 0, kind: EntryKind.drop },
    {
      ...at(48n, 3n),
      shardId: 8,
      amount: 0n,
      idempotencyKey: noKey,
      fenceShardCount: 0,
      kind: EntryKind.clear,
      payload: encodeGeneration(3),
    },
    { ...at(49n, 3n), shardId: 8, amount: 0n, idempotencyKey: Buffer.from('late'), fenceShardCount: 0, kind: EntryKind.clearedKey },
  ];
}

describe('entry columns', () => {
  it('every kind of entry round-trips, lsns counted from the first', () => {
    const entries = sample();
    const data = encodeEntryColumns(entries);
    expect(data.length).toBe(columnsBytes(entries));
    expect(decodeEntryColumns(41n, entries.length, data)).toEqual(entries);
  });

  it('a plain increment takes 33 bytes; no entries take none', () => {
    expect(encodeEntryColumns(sample().slice(0, 1)).length).toBe(33);
    expect(decodeEntryColumns(1n, 0, Buffer.alloc(0))).toEqual([]);
  });

  it('a cut, padded or miscounted block is refused with INVALID_ARGUMENT', () => {
    const entries = sample();
    const data = encodeEntryColumns(entries);
    const refused = (block: Buffer, count = entries.length) => {
      try {
        decodeEntryColumns(41n, count, block);
      } catch (error) {
        return error instanceof TallyError && error.code === ErrorCode.invalidArgument ? 'refused' : error;
      }
      return 'accepted';
    };
    expect(refused(data.subarray(0, data.length - 1))).toBe('refused');
    expect(refused(Buffer.concat([data, Buffer.alloc(1)]))).toBe('refused');
    expect(refused(data, entries.length + 1)).toBe('refused');
    expect(refused(data, entries.length - 1)).toBe('refused');
  });

  it('an entry no log could hold (unknown kind, zero shard) is refused', () => {
    const one = encodeEntryColumns(sample().slice(0, 1));
    const badKind = Buffer.from(one);
    badKind.writeUInt8(9, 32);
    const badShard = Buffer.from(one);
    badShard.writeDoubleLE(0, 0);
    for (const block of [badKind, badShard]) expect(() => decodeEntryColumns(1n, 1, block)).toThrow(/invalid/);
  });
});
