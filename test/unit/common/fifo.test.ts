// Unit tests for Fifo: order kept through any mix of pushes and shifts, and
// the backing array bounded by what is queued (consumed slots are reclaimed).
import { describe, expect, it } from 'vitest';
import { Fifo } from '../../../src/common/index.ts';
import { randomInt, seededRandom } from '../../helpers/seeded-random.ts';

describe('fifo', () => {
  it('items leave in the order they came, through random pushes and shifts (seeded, against a model)', () => {
    const random = seededRandom(0xf1f0_0001);
    const fifo = new Fifo<number>();
    // The model: items are numbered as pushed, so the queue holds exactly [nextOut, nextIn).
    let nextIn = 0;
    let nextOut = 0;
    const violations: string[] = [];
    for (let step = 0; step < 50_000; step++) {
      // Phases that fill and drain, so compaction runs at many lengths.
      const pushBias = Math.floor(step / 5_000) % 2 === 0 ? 0.7 : 0.3;
      const count = randomInt(random, 1, 50);
      for (let index = 0; index < count; index++) {
        if (random() < pushBias) fifo.push(nextIn++);
        else {
          const shifted = fifo.shift();
          const expected = nextOut < nextIn ? nextOut++ : undefined;
          if (shifted !== expected) violations.push(`step ${step}: shifted ${shifted}, expected ${expected}`);
        }
      }
      if (fifo.length !== nextIn - nextOut) violations.push(`step ${step}: length ${fifo.length}, expected ${nextIn - nextOut}`);
      const head = nextOut < nextIn ? nextOut : undefined;
      if (fifo.peek() !== head) violations.push(`step ${step}: peek ${fifo.peek()}, expected ${head}`);
    }
    expect(violations).toEqual([]);
    expect(nextOut).toBeGreaterThan(100_000);
  });

  it('a flood of 1,000,000 items pushed and shifted keeps the backing array within twice the queue plus 1,024 slots', () => {
    const fifo = new Fifo<{ index: number }>();
    let slotViolations = 0;
    let orderViolations = 0;
    let expected = 0;
    for (let index = 0; index < 1_000_000; index++) {
      fifo.push({ index });
      // Drains two for every three pushed, so the queue grows to a third of a million while slots are reclaimed.
      if (index % 3 !== 0) {
        if (fifo.shift()!.index !== expected++) orderViolations++;
      }
      if (fifo.slotCount > 2 * fifo.length + 1_024) slotViolations++;
    }
    while (fifo.length > 0) if (fifo.shift()!.index !== expected++) orderViolations++;
    expect(orderViolations).toBe(0);
    expect(slotViolations).toBe(0);
    expect(expected).toBe(1_000_000);
    expect(fifo.shift()).toBeUndefined();
    expect(fifo.slotCount).toBe(0);
  });
});
