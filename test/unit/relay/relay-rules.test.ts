// The relay's pure rules: row keys, which rows are dead letters, the window
// edge, its configuration, and the per-row fallback when Tally refuses a
// batch (against a fake sender: no database, no cluster).
import { describe, expect, it } from 'vitest';
import {
  CapName,
  capRefusalDetails,
  ErrorCode,
  TallyError,
  fromServiceError,
  idempotencyKeyBytesMax,
  toServiceError,
} from '../../../src/wire/index.ts';
import {
  isBeyondWindow,
  parseRelayConfig,
  repairKey,
  resendLimitMs,
  rowKey,
  rowProblem,
  sendRows,
  splitSendable,
  capOf,
  identityChange,
  windowRefusal,
  type IncrementSender,
  type OutboxRow,
} from '../../../src/relay/index.ts';

const url = 'postgresql://app@db:5432/shop';

function row(id: number, counter: string | null, amount: bigint | null): OutboxRow {
  return { id: BigInt(id), counter, amount, ageMs: 0, attemptAgeMs: null };
}

describe('relay rules', () => {
  it('rowKey: the same for a row whatever sends it, different per row and per outbox, never past the key limit', () => {
    expect(rowKey('shop.public.tally_outbox', 17n)).toBe('outbox:shop.public.tally_outbox:17');
    expect(rowKey('shop.public.tally_outbox', 17n)).not.toBe(rowKey('shop.public.tally_outbox', 18n));
    expect(rowKey('a.public.tally_outbox', 17n)).not.toBe(rowKey('b.public.tally_outbox', 17n));
    const long = rowKey('d'.repeat(63) + '.' + 's'.repeat(63) + '.' + 't'.repeat(63), 9_223_372_036_854_775_807n);
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(idempotencyKeyBytesMax);
  });

  it('rowProblem: empty, oversized, control-character and null names and zero or null amounts are dead letters', () => {
    expect(rowProblem({ counter: 'post:1:like', amount: -3n })).toBeUndefined();
    expect(rowProblem({ counter: '', amount: 1n })).toBe('invalid_argument: counter name is empty');
    expect(rowProblem({ counter: 'x'.repeat(201), amount: 1n })).toMatch(/^invalid_argument: counter name is 201 bytes/);
    expect(rowProblem({ counter: 'a\u0007b', amount: 1n })).toMatch(/control character/);
    expect(rowProblem({ counter: 'c', amount: 0n })).toBe('invalid_argument: amount is 0');
    expect(rowProblem({ counter: null, amount: 1n })).toMatch(/null/);
    expect(rowProblem({ counter: 'c', amount: null })).toMatch(/null/);
  });

  it('splitSendable: the rows Tally would refuse become dead letters with their reason, the rest are sent, each in its order', () => {
    const rows = [row(1, 'a', 1n), row(2, '', 1n), row(3, 'b', 0n), row(4, 'c', -2n), row(5, null, 1n)];
    const { sendable, dead } = splitSendable(rows);
    expect(sendable.map((sent) => sent.id)).toEqual([1n, 4n]);
    expect(dead).toEqual([
      { id: 2n, reason: 'invalid_argument: counter name is empty' },
      { id: 3n, reason: 'invalid_argument: amount is 0' },
      { id: 5n, reason: 'invalid_argument: counter is null' },
    ]);
    expect(splitSendable([])).toEqual({ sendable: [], dead: [] });
  });

  it('isBeyondWindow: a row is sent again only within nine tenths of the dedup window of its first send', () => {
    expect(resendLimitMs(10_000)).toBe(9_000);
    expect(isBeyondWindow({ attemptAgeMs: null }, 10_000)).toBe(false);
    expect(isBeyondWindow({ attemptAgeMs: 8_999 }, 10_000)).toBe(false);
    expect(isBeyondWindow({ attemptAgeMs: 9_000 }, 10_000)).toBe(true);
  });

  it('repairKey: the same for the same counter and repair number whatever the drift, different per number, counter and namespace', () => {
    const key = repairKey('ns', 'c', 0n);
    expect(repairKey('ns', 'c', 0n)).toBe(key);
    expect(repairKey('ns', 'c', 1n)).not.toBe(key);
    expect(repairKey('ns', 'd', 0n)).not.toBe(key);
    expect(repairKey('other', 'c', 0n)).not.toBe(key);
    expect(Buffer.byteLength(key)).toBeLessThanOrEqual(idempotencyKeyBytesMax);
  });

  it('identityChange: a new system identifier, a recreated table, a restarted or set-back id sequence; nothing else', () => {
    const same = { systemIdentifier: '7001', outboxOid: '16384', sequenceFilenode: '16390' as string | null };
    const finding = { recorded: same, current: same, idHighWater: 40n, sequenceLastValue: 40n as bigint | null | undefined };
    expect(identityChange('t', finding)).toBeUndefined();
    expect(identityChange('t', { ...finding, sequenceLastValue: undefined })).toBeUndefined();
    expect(identityChange('t', { ...finding, idHighWater: 0n, sequenceLastValue: null })).toBeUndefined();
    expect(identityChange('t', { ...finding, current: { ...same, systemIdentifier: '7002' } })).toMatch(
      /system identifier is 7002, not 7001/,
    );
    expect(identityChange('t', { ...finding, current: { ...same, outboxOid: '20000' } })).toMatch(/oid 20000, not 16384/);
    expect(identityChange('t', { ...finding, current: { ...same, sequenceFilenode: '16400' }, sequenceLastValue: 900n })).toMatch(
      /id sequence of t was restarted .*relfilenode is 16400, not 16390/,
    );
    expect(identityChange('t', { ...finding, sequenceLastValue: 39n })).toMatch(/at 39, below 40/);
    expect(identityChange('t', { ...finding, sequenceLastValue: null })).toMatch(/at its start, below 40/);
  });

  it('capOf: a cap refusal keeps its cap across the wire (server to client) and its reason NOT_APPLIED; a busy refusal has none', () => {
    const cap = new TallyError(
      ErrorCode.resourceExhausted,
      'the directory holds 3 counters',
      undefined,
      capRefusalDetails(CapName.countersMax),
    );
    const received = fromServiceError(toServiceError(cap));
    expect(received.code).toBe('resource_exhausted');
    expect(received.certainlyNotApplied).toBe(true);
    expect(capOf(received)).toBe('counters_max');
    const busy = fromServiceError(
      toServiceError(new TallyError(ErrorCode.resourceExhausted, 'queue full', undefined, { retryAfterMs: 100 })),
    );
    expect(capOf(busy)).toBeUndefined();
    expect(capOf(new TallyError(ErrorCode.invalidArgument, 'x', undefined, { metadata: { cap: 'counters_max' } }))).toBeUndefined();
  });

  it("windowRefusal: a relay window longer than the cluster's, or a cluster that does not say, is refused naming both; equal or shorter runs", () => {
    expect(windowRefusal(3_000, 3_000, 'r1')).toBeUndefined();
    expect(windowRefusal(1_000, 3_000, 'r1')).toBeUndefined();
    expect(windowRefusal(4_000, 3_000, 'r1')).toMatch(
      /--dedup-window-ms 4000 is longer than the cluster's dedup window of 3000 ms \(router r1\)/,
    );
    expect(windowRefusal(4_000, 0, 'r1')).toMatch(/router r1 does not advertise its dedup window/);
  });

  it('parseRelayConfig: flags over TALLY_* environment over defaults; bad settings name themselves', () => {
    const config = parseRelayConfig(new Map([['batch', '1000']]), {
      TALLY_POSTGRES: url,
      TALLY_TABLE: 'app.events_outbox',
      TALLY_BATCH: '5',
    });
    expect(config.batchRows).toBe(1000);
    expect(config.tables.outbox).toEqual({ schema: 'app', name: 'events_outbox' });
    expect(config.tables.deadLetters).toEqual({ schema: 'app', name: 'events_outbox_dead_letters' });
    expect(config.tables.attempts).toEqual({ schema: 'app', name: 'events_outbox_attempts' });
    expect(config.tables.archive).toBeUndefined();
    expect(config.dedupWindowMs).toBe(86_400_000);
    const message = (flags: [string, string][], env: NodeJS.ProcessEnv = { TALLY_POSTGRES: url }): string => {
      try {
        parseRelayConfig(new Map(flags), env);
        return 'no error';
      } catch (error) {
        return (error as Error).message;
      }
    };
    expect(message([], {})).toContain('--postgres (or TALLY_POSTGRES) is required');
    expect(message([['postgres', 'mysql://x']])).toContain('postgresql://');
    expect(message([['table', 'Robert;DROP']])).toContain('--table must be a table name');
    expect(message([['batch', '0']])).toContain('--batch must be between 1 and 10000');
    expect(message([['reconcile-every', '5m']])).toContain('--reconcile-every needs --archive-table');
    expect(
      message([
        ['reconcile-every', '5x'],
        ['archive-table', 'a'],
      ]),
    ).toContain('--reconcile-every must be a duration');
    expect(message([['archive-table', 'tally_outbox']])).toContain('must differ');
    expect(message([['table', 'x'.repeat(60)]])).toContain('too long');
  });

  it('sendRows: a batch Tally refuses for one row is halved down to that row; the refused rows are dead, the rest acknowledged', async () => {
    const applied = new Set<string>();
    const apply = (amount: bigint | number | string, key: unknown): { applied: boolean; shard: number } => {
      if (amount === 999n) throw new TallyError(ErrorCode.outOfRange, 'total would leave int64');
      const fresh = !applied.has(String(key));
      applied.add(String(key));
      return { applied: fresh, shard: 0 };
    };
    const sender: IncrementSender = {
      async incrementBatch(items) {
        // Tally refuses a batch as a whole: nothing of it acknowledged.
        if (items.some((item) => item.amount === 999n)) throw new TallyError(ErrorCode.outOfRange, 'total would leave int64');
        return items.map((item) => apply(item.amount, item.idempotencyKey));
      },
      increment: async (_counter, amount, options) => apply(amount, options?.idempotencyKey),
    };
    // Row 2 was applied by an earlier, crashed send: a duplicate now.
    applied.add(rowKey('ns', 2n));
    const outcome = await sendRows(sender, 'ns', [row(1, 'c', 1n), row(2, 'c', 2n), row(3, 'c', 999n), row(4, 'c', 4n)]);
    expect(outcome.applied).toEqual([1n, 4n]);
    expect(outcome.duplicates).toEqual([2n]);
    expect(outcome.dead).toEqual([{ id: 3n, reason: 'out_of_range: total would leave int64' }]);
  });

  it('sendRows: a batch refused for a cap (RESOURCE_EXHAUSTED with a cap in its details) is halved; only a row refused alone is dead, with reason cap_exceeded', async () => {
    // A directory with room for one more counter: "c:old" exists.
    const existing = new Set(['c:old']);
    const countersMax = 2;
    let batchCalls = 0;
    const refuse = (newCount: number): TallyError =>
      new TallyError(
        ErrorCode.resourceExhausted,
        `the directory holds ${existing.size} counters; ${newCount} new ones would pass the limit of ${countersMax} counters (--counters-max)`,
        undefined,
        // As the router sends it: ErrorInfo reason NOT_APPLIED, metadata { cap }.
        { reason: 'NOT_APPLIED', metadata: { cap: 'counters_max' } },
      );
    const sender: IncrementSender = {
      async incrementBatch(items) {
        batchCalls++;
        const fresh = new Set(items.map((item) => item.counter).filter((counter) => !existing.has(counter)));
        if (existing.size + fresh.size > countersMax) throw refuse(fresh.size);
        for (const counter of fresh) existing.add(counter);
        return items.map(() => ({ applied: true, shard: 0 }));
      },
      increment: () => Promise.reject(new Error('a cap refusal is split in batches, not sent row by row')),
    };
    const rows = [row(1, 'c:old', 1n), row(2, 'c:old', 2n), row(3, 'c:new1', 3n), row(4, 'c:new2', 4n), row(5, 'c:old', 5n)];
    const outcome = await sendRows(sender, 'ns', rows);
    expect(outcome.applied).toEqual([1n, 2n, 3n, 5n]);
    expect(outcome.duplicates).toEqual([]);
    expect(outcome.dead).toEqual([
      {
        id: 4n,
        reason: 'cap_exceeded: the directory holds 2 counters; 1 new ones would pass the limit of 2 counters (--counters-max)',
        cap: 'counters_max',
      },
    ]);
    // Halving: 5 -> [1,2,3] + [4,5] -> [4] + [5]: 5 calls, not one per row.
    expect(batchCalls).toBe(5);
  });

  it('sendRows: a busy RESOURCE_EXHAUSTED (load shed, no cap in its details) rejects, so the batch is retried with backoff, not dead-lettered', async () => {
    const sender: IncrementSender = {
      incrementBatch: () =>
        Promise.reject(
          new TallyError(ErrorCode.resourceExhausted, 'node n1 has 9000 increments queued; try again', undefined, { retryAfterMs: 50 }),
        ),
      increment: () => Promise.reject(new Error('not called')),
    };
    await expect(sendRows(sender, 'ns', [row(1, 'c', 1n), row(2, 'c', 2n)])).rejects.toMatchObject({ code: 'resource_exhausted' });
  });

  it('sendRows: a failure that is not the rows fault rejects, so the batch is rolled back and sent again', async () => {
    const sender: IncrementSender = {
      incrementBatch: () => Promise.reject(new TallyError(ErrorCode.unavailable, 'no primary')),
      increment: () => Promise.reject(new Error('not called')),
    };
    await expect(sendRows(sender, 'ns', [row(1, 'c', 1n)])).rejects.toMatchObject({ code: 'unavailable' });
  });
});
