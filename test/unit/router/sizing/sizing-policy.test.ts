// Automatic sizing with an injected clock: grows only after sustained heat,
// to the target with headroom, never for a cold counter, never when off.
import { describe, expect, it } from 'vitest';
import { SizingPolicy, defaultSizing, targetShards } from '../../../../src/router/sizing/sizing-policy.ts';
import { HeatTracker, skewOf } from '../../../../src/router/sizing/heat.ts';

const settings = { ...defaultSizing, shardCeilingPerSec: 1_000, shardsMax: 64 };

describe('sizing policy', () => {
  it('target is ceil(peak / ceiling) clamped to [1, shardsMax]; 100,000/s at 1,000 needs 100 (clamped to 64)', () => {
    expect(targetShards(0, settings)).toBe(1);
    expect(targetShards(999, settings)).toBe(1);
    expect(targetShards(1_001, settings)).toBe(2);
    expect(targetShards(100_000, { shardCeilingPerSec: 1_000, shardsMax: 1_024 })).toBe(100);
    expect(targetShards(100_000, settings)).toBe(64);
  });

  it('a counter over capacity grows only after sustainMs, to the target with headroom', () => {
    const policy = new SizingPolicy(settings);
    expect(policy.decide('hot', 1, 5_000, 5_000, 0, true)).toBeUndefined();
    expect(policy.decide('hot', 1, 5_000, 5_000, settings.sustainMs - 1, true)).toBeUndefined();
    expect(policy.decide('hot', 1, 5_000, 5_000, settings.sustainMs, true)).toBe(Math.ceil((5_000 * settings.headroom) / 1_000));
  });

  it('a dip below capacity restarts the sustain clock (a spike does not grow)', () => {
    const policy = new SizingPolicy(settings);
    expect(policy.decide('spiky', 2, 3_000, 3_000, 0, true)).toBeUndefined();
    expect(policy.decide('spiky', 2, 1_500, 1_500, 2_000, true)).toBeUndefined();
    expect(policy.decide('spiky', 2, 3_000, 3_000, 2_500, true)).toBeUndefined();
    expect(policy.decide('spiky', 2, 3_000, 3_000, 2_500 + settings.sustainMs - 1, true)).toBeUndefined();
    expect(policy.decide('spiky', 2, 3_000, 3_000, 2_500 + settings.sustainMs, true)).toBe(4);
  });

  it('near a boundary (within the 10% threshold) it never grows; a cold counter never grows', () => {
    const policy = new SizingPolicy(settings);
    for (let nowMs = 0; nowMs < 60_000; nowMs += 500) {
      expect(policy.decide('edge', 4, 4_300, 4_300, nowMs, true)).toBeUndefined();
      expect(policy.decide('cold', 1, 3, 3, nowMs, true)).toBeUndefined();
    }
  });

  it('autoscale off, or already at shardsMax, never grows', () => {
    const policy = new SizingPolicy(settings);
    for (let nowMs = 0; nowMs < 10_000; nowMs += 500) {
      expect(policy.decide('pinned', 2, 50_000, 50_000, nowMs, false)).toBeUndefined();
      expect(policy.decide('maxed', 64, 500_000, 500_000, nowMs, true)).toBeUndefined();
    }
  });

  it('a remembered peak alone never grows a counter that has cooled', () => {
    const policy = new SizingPolicy(settings);
    for (let nowMs = 0; nowMs < 30_000; nowMs += 500) expect(policy.decide('cooled', 2, 150, 9_000, nowMs, true)).toBeUndefined();
  });

  it('after a growth the new capacity covers the peak, so it does not grow again at once', () => {
    const policy = new SizingPolicy(settings);
    policy.decide('hot', 1, 8_000, 8_000, 0, true);
    const grown = policy.decide('hot', 1, 8_000, 8_000, settings.sustainMs, true)!;
    expect(grown).toBe(10);
    for (let nowMs = settings.sustainMs; nowMs < 60_000; nowMs += 500)
      expect(policy.decide('hot', grown, 8_000, 8_000, nowMs, true)).toBeUndefined();
  });
});

describe('heat peak and skew', () => {
  it('the peak follows a burst up at once and decays slowly after it', () => {
    let nowMs = 0;
    const heat = new HeatTracker(1_000, () => nowMs, 10_000);
    for (let step = 0; step < 100; step++) {
      nowMs += 100;
      heat.record('burst', 500);
    }
    const peak = heat.peakPerSec('burst');
    expect(peak).toBeGreaterThan(4_500);
    nowMs += 10_000;
    heat.record('burst', 1);
    expect(heat.ratePerSec('burst')).toBeLessThan(10);
    expect(heat.peakPerSec('burst')).toBeCloseTo(peak / 2, -2);
  });

  it('sample() reports per-shard counts and drops counters that cooled to nothing', () => {
    let nowMs = 0;
    const heat = new HeatTracker(1_000, () => nowMs, 1_000);
    nowMs += 1_000;
    for (let index = 0; index < 40; index++) heat.record('c', 1, index % 4);
    nowMs += 200;
    const [sample] = heat.sample();
    expect(sample!.shardCounts).toEqual([10, 10, 10, 10]);
    nowMs += 120_000;
    expect(heat.sample()).toHaveLength(0);
    expect(heat.trackedCount).toBe(0);
  });

  it('skew: max shard rate over mean; 1 when even or single-shard, counting idle shards', () => {
    expect(skewOf([10, 10, 10, 10], 4)).toBe(1);
    expect(skewOf([40], 1)).toBe(1);
    expect(skewOf([20, 0, 0, 0], 4)).toBe(4);
    expect(skewOf([10, 10], 4)).toBe(2);
  });
});
