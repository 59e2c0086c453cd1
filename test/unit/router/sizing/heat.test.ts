// Unit tests for HeatTracker: a smoothed increments/s rate driven by an
// injected clock, so every instant is chosen by the test.
import { describe, expect, it, vi } from 'vitest';
import { HeatTracker } from '../../../../src/router/sizing/heat.ts';
import { HeatAdmission } from '../../../../src/router/sizing/heat-admission.ts';
import { heatAdmitIncrements } from '../../../../src/common/index.ts';

class FakeClock {
  nowMs = 1_000_000;
  readonly now = (): number => this.nowMs;
  advance(ms: number): void {
    this.nowMs += ms;
  }
}

const halfLifeMs = 1_000;

/** Feeds `perSec` increments per second in steps of stepMs for durationMs. */
function feed(heat: HeatTracker, clock: FakeClock, name: string, perSec: number, stepMs: number, durationMs: number): void {
  for (let elapsedMs = 0; elapsedMs < durationMs; elapsedMs += stepMs) {
    clock.advance(stepMs);
    heat.record(name, (perSec * stepMs) / 1000);
  }
}

describe('heat', () => {
  it('a counter never incremented has rate 0', () => {
    const clock = new FakeClock();
    const heat = new HeatTracker(halfLifeMs, clock.now);
    expect(heat.ratePerSec('unknown')).toBe(0);
    clock.advance(60_000);
    expect(heat.ratePerSec('unknown')).toBe(0);
  });

  it('the rate converges to a steady input rate', () => {
    const clock = new FakeClock();
    const heat = new HeatTracker(halfLifeMs, clock.now);
    feed(heat, clock, 'hot', 500, 100, 20 * halfLifeMs);
    expect(heat.ratePerSec('hot')).toBeCloseTo(500, 0);
  });

  it('the rate converges when increments arrive more often than the 100 ms fold', () => {
    const clock = new FakeClock();
    const heat = new HeatTracker(halfLifeMs, clock.now);
    // 3 increments every 30 ms is 100/s, folded in uneven windows.
    feed(heat, clock, 'hot', 100, 30, 30 * halfLifeMs);
    expect(heat.ratePerSec('hot')).toBeCloseTo(100, 0);
  });

  it('the rate follows a change of input rate', () => {
    const clock = new FakeClock();
    const heat = new HeatTracker(halfLifeMs, clock.now);
    feed(heat, clock, 'c', 1_000, 100, 20 * halfLifeMs);
    feed(heat, clock, 'c', 10, 100, 20 * halfLifeMs);
    expect(heat.ratePerSec('c')).toBeCloseTo(10, 0);
  });

  it('an idle counter loses half its rate per half-life and decays toward 0', () => {
    const clock = new FakeClock();
    const heat = new HeatTracker(halfLifeMs, clock.now);
    feed(heat, clock, 'c', 800, 100, 20 * halfLifeMs);
    const steadyPerSec = heat.ratePerSec('c');
    clock.advance(halfLifeMs);
    expect(heat.ratePerSec('c')).toBeCloseTo(steadyPerSec / 2, 6);
    clock.advance(halfLifeMs);
    expect(heat.ratePerSec('c')).toBeCloseTo(steadyPerSec / 4, 6);
    clock.advance(30 * halfLifeMs);
    expect(heat.ratePerSec('c')).toBeLessThan(steadyPerSec / 1e9);
    expect(heat.ratePerSec('c')).toBeGreaterThanOrEqual(0);
  });

  it('a burst within one instant is not read as an infinite rate', () => {
    const clock = new FakeClock();
    const heat = new HeatTracker(halfLifeMs, clock.now);
    heat.record('burst', 1_000_000);
    heat.record('burst', 1_000_000);
    expect(Number.isFinite(heat.ratePerSec('burst'))).toBe(true);
    clock.advance(100);
    const rate = heat.ratePerSec('burst');
    expect(Number.isFinite(rate)).toBe(true);
    // 2e6 increments over 100 ms is 2e7/s; the average may not overshoot it.
    expect(rate).toBeGreaterThan(0);
    expect(rate).toBeLessThanOrEqual(2e7);
  });

  it('counters are tracked independently', () => {
    const clock = new FakeClock();
    const heat = new HeatTracker(halfLifeMs, clock.now);
    for (let step = 0; step < 200; step++) {
      clock.advance(100);
      heat.record('hot', 100);
      heat.record('cold', 1);
    }
    expect(heat.ratePerSec('hot')).toBeCloseTo(1_000, 0);
    expect(heat.ratePerSec('cold')).toBeCloseTo(10, 1);
    expect(heat.ratePerSec('other')).toBe(0);
  });

  it('a flood of 100,000 counters incremented once each stays within countersMax, evicts nothing once full (cold touches are refused), keeps the hot one, and never walks its entries on an increment', () => {
    const clock = new FakeClock();
    const countersMax = 1_000;
    const heat = new HeatTracker(halfLifeMs, clock.now, 60_000, countersMax);
    const spies = [Symbol.iterator, 'keys', 'values', 'entries', 'forEach'].map((method) => vi.spyOn(Map.prototype, method as 'keys'));
    let trackedMax = 0;
    for (let index = 0; index < 100_000; index++) {
      // 10 ms apart: a second of flood is 100 cold counters and 100 increments of the hot one.
      clock.advance(10);
      heat.record(`flood:${index}`, 1, 0);
      heat.record('hot', 1, index % 4);
      trackedMax = Math.max(trackedMax, heat.trackedCount);
    }
    const walkCount = spies.reduce((sum, spy) => sum + spy.mock.calls.length, 0);
    vi.restoreAllMocks();
    expect(walkCount).toBe(0);
    expect(trackedMax).toBe(countersMax);
    // The table filled with the first 999 flood counters and the hot one; every later touch, once, was refused.
    expect(heat.evictedCount).toBe(0);
    expect(heat.refusedCount).toBe(100_000 - (countersMax - 1));
    // The hot counter, incremented throughout: its rate is intact (100/s).
    expect(heat.ratePerSec('hot')).toBeCloseTo(100, 0);
    expect(heat.ratePerSec('flood:99500')).toBe(0);
    // A sample visits only what is tracked.
    const samples = heat.sample();
    expect(samples.length).toBeLessThanOrEqual(countersMax);
    expect(samples.find((sample) => sample.counter === 'hot')?.shardCounts).toHaveLength(4);
  });

  it('a full table takes a counter once it has gathered heatAdmitIncrements lately, evicting the least recently incremented; what it gathered fades at every sample', () => {
    const clock = new FakeClock();
    const heat = new HeatTracker(halfLifeMs, clock.now, 60_000, 3);
    for (const name of ['a', 'b', 'c']) heat.record(name, 1);
    clock.advance(10);
    // Just below the bar: refused, twice; the sketch counts both.
    heat.record('warm', heatAdmitIncrements / 2 - 1);
    heat.record('warm', heatAdmitIncrements / 2 - 1);
    expect(heat.trackedCount).toBe(3);
    expect(heat.refusedCount).toBe(2);
    // The third batch brings it over: admitted, the least recently incremented ('a') goes.
    heat.record('warm', 2);
    expect(heat.evictedCount).toBe(1);
    expect(heat.lastSample('warm')).toBeDefined();
    expect(heat.lastSample('a')).toBeUndefined();
    // A counter that gathers slowly, across samples, fades instead: halved at each sample, it never reaches the bar.
    for (let round = 0; round < 10; round++) {
      heat.record('slow', heatAdmitIncrements / 2 - 1);
      heat.sample();
    }
    expect(heat.lastSample('slow')).toBeUndefined();
  });

  it('heat admission: a count-min estimate never undercounts, saturates, and halves on decay', () => {
    const sketch = new HeatAdmission(1_024);
    const truth = new Map<string, number>();
    for (let index = 0; index < 20_000; index++) {
      const name = `n${index % 3_000}`;
      const count = 1 + (index % 3);
      truth.set(name, (truth.get(name) ?? 0) + count);
      expect(sketch.add(name, count)).toBeGreaterThanOrEqual(truth.get(name)!);
    }
    expect(sketch.add('big', 70_000)).toBe(0xffff);
    sketch.decay();
    expect(sketch.add('big', 0)).toBe(0x7fff);
    expect(() => new HeatAdmission(1_000)).toThrow(/power of two/);
  });
});
