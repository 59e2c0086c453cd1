// The services' handlers one at a time, over fakes of the paths they hand
// off to: bad input is refused with a code naming what is wrong and reaches
// no path; good input reaches the one path meant, with what it needs.
import { Registry } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import { ErrorCode, TallyError } from '../../../../src/wire/index.ts';
import { distinctMemberBytesMax, type Logger } from '../../../../src/common/index.ts';
import type { CallState } from '../../../../src/router/api/index.ts';
import { createKindHandlers, createReadHandlers, type KindDeps, type ReadDeps } from '../../../../src/router/api/counter/index.ts';
import { createPairHandlers, type PairDeps } from '../../../../src/router/api/admin/index.ts';
import type { PairInfo } from '../../../../src/router/directory/index.ts';
import { createRouterMetrics } from '../../../../src/router/metrics/index.ts';

const call: CallState = { cancelled: false, getDeadline: () => Infinity };
const silentLogger = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as unknown as Logger;

/** The TallyError code a handler call fails with. */
async function codeOf(work: () => unknown): Promise<string> {
  try {
    await work();
  } catch (error) {
    expect(error).toBeInstanceOf(TallyError);
    return (error as TallyError).code;
  }
  throw new Error('the handler did not fail');
}

function totalRead(counter: string) {
  return { counter, total: 7n, exact: true, asOfMs: 1, stalenessMs: 0, shardCount: 1 };
}

function readDeps() {
  const deps = {
    reads: {
      readExact: vi.fn(async (names: string[]) => names.map(totalRead)),
      readCached: vi.fn(async (names: string[]) => names.map(totalRead)),
    },
    windows: { read: vi.fn() },
    globalReads: { read: vi.fn(async (names: string[]) => names.map((name) => ({ ...totalRead(name), regions: [] }))) },
    metrics: createRouterMetrics(new Registry()),
  };
  return { deps, handlers: createReadHandlers(deps as unknown as ReadDeps) };
}

describe('read handlers', () => {
  it('refuse an unknown consistency, scope or window length without reading', async () => {
    const { deps, handlers } = readDeps();
    expect(
      await codeOf(() => handlers.handlers.Read.handle({ counter: 'a', consistency: 'FRESH', scope: 'SCOPE_REGION' } as never, call)),
    ).toBe(ErrorCode.invalidArgument);
    expect(await codeOf(() => handlers.handlers.Read.handle({ counter: 'a', consistency: 'EXACT', scope: 7 } as never, call))).toBe(
      ErrorCode.invalidArgument,
    );
    expect(await codeOf(() => handlers.handlers.ReadWindow.handle({ counter: 'a', consistency: 'EXACT', lastMs: '0' }, call))).toBe(
      ErrorCode.invalidArgument,
    );
    expect(deps.reads.readExact).not.toHaveBeenCalled();
    expect(deps.windows.read).not.toHaveBeenCalled();
  });

  it('send CACHED to the cached path, EXACT to the exact one, and SCOPE_GLOBAL to the global reader', async () => {
    const { deps, handlers } = readDeps();
    expect((await handlers.handlers.Read.handle({ counter: 'a', consistency: 'CACHED', scope: 'SCOPE_REGION' }, call)).total).toBe('7');
    expect(deps.reads.readCached).toHaveBeenCalledWith(['a']);
    const page = await handlers.readPage({ counters: ['a', 'b'], consistency: 'EXACT' } as never);
    expect(page.values?.map((value) => value.counter)).toEqual(['a', 'b']);
    expect(deps.reads.readExact).toHaveBeenCalledWith(['a', 'b']);
    await handlers.handlers.Read.handle({ counter: 'a', consistency: 'EXACT', scope: 'SCOPE_GLOBAL' }, call);
    expect(deps.globalReads.read).toHaveBeenCalledWith(['a'], 'EXACT');
  });
});

function kindDeps() {
  const deps = {
    distinct: { add: vi.fn(async () => ({ registersChanged: 1, shardIndex: 0 })), count: vi.fn() },
    membership: { set: vi.fn(), check: vi.fn() },
    lifecycle: { clear: vi.fn() },
    heat: { record: vi.fn() },
    metrics: createRouterMetrics(new Registry()),
  };
  return { deps, handlers: createKindHandlers(deps as unknown as KindDeps, (_label, read) => read()) };
}

describe('kind handlers', () => {
  it('refuse an empty or oversized distinct member by its position, adding nothing', async () => {
    const { deps, handlers } = kindDeps();
    const empty = handlers.AddDistinct.handle({ counter: 'd', members: [Buffer.from('x'), Buffer.alloc(0)] }, call);
    await expect(empty).rejects.toThrow('member 1 is empty');
    const large = handlers.AddDistinct.handle({ counter: 'd', members: [Buffer.alloc(distinctMemberBytesMax + 1)] }, call);
    await expect(large).rejects.toThrow(`member 0 has ${distinctMemberBytesMax + 1} bytes`);
    expect(deps.distinct.add).not.toHaveBeenCalled();
    expect(deps.heat.record).not.toHaveBeenCalled();
  });

  it('add distinct members to the counter and record one write of heat on its shard', async () => {
    const { deps, handlers } = kindDeps();
    expect(await handlers.AddDistinct.handle({ counter: 'd', members: [Buffer.from('x')] }, call)).toEqual({ registersChanged: 1 });
    expect(deps.heat.record).toHaveBeenCalledWith('d', 1, 0);
  });

  it('refuse a bad membership member or clear key without asking the path', async () => {
    const { deps, handlers } = kindDeps();
    expect(await codeOf(() => handlers.SetMember.handle({ counter: 'm', member: 'not-a-number', present: true }, call))).toBe(
      ErrorCode.invalidArgument,
    );
    expect(await codeOf(() => handlers.Clear.handle({ counter: 'c', idempotencyKey: Buffer.alloc(10_000) }, call))).toBe(
      ErrorCode.invalidArgument,
    );
    expect(deps.membership.set).not.toHaveBeenCalled();
    expect(deps.lifecycle.clear).not.toHaveBeenCalled();
  });
});

function pairDeps() {
  const pair = { pairIndex: 0, primary: '127.0.0.1:7001', follower: '127.0.0.1:7002', epoch: 3n } as PairInfo;
  const directory = {
    allPairs: () => [pair],
    pairOf: (address: string) => (address === pair.primary || address === pair.follower ? pair : undefined),
    setPairDraining: vi.fn(),
    updatePair: vi.fn(async () => ({ ...pair, follower: '127.0.0.1:7003' })),
    addPair: vi.fn(),
  };
  const deps = { directory, pool: {}, metrics: createRouterMetrics(new Registry()), logger: silentLogger, onPairAdded: vi.fn() };
  return { deps, handlers: createPairHandlers(deps as unknown as PairDeps) };
}

describe('pair handlers', () => {
  it('refuse draining a pair that does not exist', async () => {
    const { deps, handlers } = pairDeps();
    expect(await codeOf(() => handlers.DrainPair.handle({ pair: 1, undrain: false }, call))).toBe(ErrorCode.notFound);
    expect(deps.directory.setPairDraining).not.toHaveBeenCalled();
  });

  it("refuse moving a primary's slot, onto a node of a pair, or from an unknown node, changing nothing", async () => {
    const { deps, handlers } = pairDeps();
    const replace = (address: string, newAddress: string) => () => handlers.ReplaceNode.handle({ address, newAddress }, call);
    expect(await codeOf(replace('127.0.0.1:7001', '127.0.0.1:7003'))).toBe(ErrorCode.failedPrecondition);
    expect(await codeOf(replace('127.0.0.1:7002', '127.0.0.1:7001'))).toBe(ErrorCode.failedPrecondition);
    expect(await codeOf(replace('127.0.0.1:7009', '127.0.0.1:7003'))).toBe(ErrorCode.notFound);
    expect(await codeOf(replace('127.0.0.1:7002', 'no port'))).toBe(ErrorCode.invalidArgument);
    expect(deps.directory.updatePair).not.toHaveBeenCalled();
  });

  it("move a follower's slot to a new node, out of sync, keeping the pair's epoch", async () => {
    const { deps, handlers } = pairDeps();
    const moved = await handlers.ReplaceNode.handle({ address: '127.0.0.1:7002', newAddress: '127.0.0.1:7003' }, call);
    expect(moved).toEqual({ pair: 0, primary: '127.0.0.1:7001', follower: '127.0.0.1:7003', epoch: '3' });
    expect(deps.directory.updatePair).toHaveBeenCalledWith(0, {
      follower: '127.0.0.1:7003',
      followerId: '',
      inSync: false,
      replaced: true,
    });
  });
});
