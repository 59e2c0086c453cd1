// The autoscaler against a real directory at its shard cap: a growth the cap
// refuses is logged and skipped, and the rest of the tick (the hot list)
// goes on. Injected clock, no timers.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { Autoscaler } from '../../../../src/router/sizing/autoscaler.ts';
import { SqliteDirectory as Directory } from '../../../../src/router/directory/sqlite/store.ts';
import { HeatTracker } from '../../../../src/router/sizing/heat.ts';
import { SizingPolicy } from '../../../../src/router/sizing/sizing-policy.ts';
import { createRouterMetrics } from '../../../../src/router/metrics/router-metrics.ts';
import type { Logger } from '../../../../src/common/index.ts';
import { makeTempDir, removeTempDir } from '../../../helpers/temp-dir.ts';

describe('autoscaler', () => {
  let dataDir: string;
  let directory: Directory;
  beforeEach(() => {
    dataDir = makeTempDir('autoscaler');
  });
  afterEach(() => {
    directory?.close();
    removeTempDir(dataDir);
  });

  it('a growth refused by --shards-total-max is logged and skipped; the tick goes on', async () => {
    let clockMs = 1_700_000_000_000;
    const now = () => clockMs;
    directory = Directory.open(dataDir, [{ primary: 'p:1', follower: 'f:1' }], now, { countersMax: 10, shardsTotalMax: 3 });
    await directory.getOrCreateMany(['hot', 'warm']);
    const warnings: { msg: string; fields?: Record<string, unknown> }[] = [];
    const logger: Logger = { debug() {}, info() {}, error() {}, warn: (msg, fields) => warnings.push({ msg, fields }) };
    const heat = new HeatTracker(1_000, now);
    const policy = new SizingPolicy({ shardCeilingPerSec: 10, shardsMax: 8, growThreshold: 1.1, sustainMs: 0, headroom: 1.25 });
    const autoscaler = new Autoscaler(directory, heat, policy, createRouterMetrics(new Registry()), logger, {
      intervalMs: 1_000,
      topK: 5,
      skewMinIncrements: 100,
    });
    for (let second = 0; second < 5; second++) {
      heat.record('hot', 1_000, 0);
      heat.record('warm', 1, 0);
      clockMs += 1_000;
      await autoscaler.tick();
    }
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings[0]).toMatchObject({ msg: 'growth refused', fields: { counter: 'hot' } });
    expect(String(warnings[0]!.fields!.reason)).toContain('limit of 3 shards');
    expect(directory.get('hot')!.shards).toHaveLength(1);
    expect(directory.shardCount).toBe(2);
    expect(autoscaler.hot(5).counters.map((counter) => counter.counter)).toEqual(['hot', 'warm']);
  });

  it('with counter labels off (--metrics-counter-labels off) no series names a counter; with them on the top K do', async () => {
    let clockMs = 1_700_000_000_000;
    const now = () => clockMs;
    directory = Directory.open(dataDir, [{ primary: 'p:1', follower: 'f:1' }], now);
    await directory.getOrCreateMany(['user:42:likes']);
    const logger: Logger = { debug() {}, info() {}, error() {}, warn() {} };
    const policy = new SizingPolicy({ shardCeilingPerSec: 1e9, shardsMax: 8, growThreshold: 1.1, sustainMs: 0, headroom: 1.25 });
    const scrape = async (counterLabels: boolean): Promise<string> => {
      const registry = new Registry();
      const heat = new HeatTracker(1_000, now);
      const autoscaler = new Autoscaler(directory!, heat, policy, createRouterMetrics(registry), logger, {
        intervalMs: 1_000,
        topK: 5,
        skewMinIncrements: 100,
        counterLabels,
      });
      heat.record('user:42:likes', 1_000, 0);
      clockMs += 1_000;
      await autoscaler.tick();
      return registry.metrics();
    };
    expect(await scrape(true)).toContain('tally_hot_increments_per_second{counter="user:42:likes"}');
    const off = await scrape(false);
    expect(off).not.toContain('user:42:likes');
    expect(off).toMatch(/^tally_heat_tracked_counters 1$/m);
  });
});
