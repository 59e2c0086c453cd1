// A read a clear overtook (a shard answered at a newer generation than the
// read named) is taken again for those counters only, and a counter cleared
// during every attempt fails UNAVAILABLE rather than mix cleared and
// uncleared shards.
import { describe, expect, it } from 'vitest';
import { overtakenCounters, rereadOvertaken } from '../../../../src/router/read/exact-reader.ts';
import { clearOvertakenReadsMax } from '../../../../src/common/index.ts';
import { TallyError } from '../../../../src/wire/index.ts';

describe('overtaken reads', () => {
  it('router: only the counters a clear overtook are read again, and their new totals replace the old', async () => {
    const asked: string[][] = [];
    const result = await rereadOvertaken(
      ['a', 'b', 'c'],
      async (names) => {
        asked.push([...names]);
        const totals = new Map(names.map((name) => [name, asked.length * 10]));
        return { result: totals, overtaken: new Set(asked.length === 1 ? ['b'] : []) };
      },
      (into, again) => {
        for (const [name, total] of again) into.set(name, total);
      },
    );
    expect(asked).toEqual([['a', 'b', 'c'], ['b']]);
    expect([...result]).toEqual([
      ['a', 10],
      ['b', 20],
      ['c', 10],
    ]);
  });

  it('router: a counter cleared during every attempt fails UNAVAILABLE after clearOvertakenReadsMax attempts again', async () => {
    let attempts = 0;
    const failure = await rereadOvertaken(
      ['x'],
      async () => {
        attempts++;
        return { result: 0, overtaken: new Set(['x']) };
      },
      () => undefined,
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TallyError);
    expect((failure as TallyError).code).toBe('unavailable');
    expect(attempts).toBe(1 + clearOvertakenReadsMax);
  });

  it('router: the indexes a node names map to their counters; one out of range is an internal error', () => {
    expect([...overtakenCounters(['a', 'a', 'b'], [1, 2])]).toEqual(['a', 'b']);
    expect(() => overtakenCounters(['a'], [3])).toThrow(TallyError);
  });
});
