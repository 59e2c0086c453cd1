// The background scrubber over a real log: a whole pass reads every entry,
// checkpoint block and part and starts over; a value moved on the disk in any
// of them is counted and handed to the log's onDamage (the node stops there).
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { Logger } from '../../../src/common/index.ts';
import type { ShardLog as Log } from '../../../src/node/log/index.ts';
import { LogScrubber } from '../../../src/node/scrubber.ts';
import { plainEntry, windowConfigEntry } from '../../helpers/log-entries.ts';
import { useTempLogs } from '../../helpers/temp-log.ts';

const quiet = (): void => undefined;
const logger = { debug: quiet, info: quiet, warn: quiet, error: quiet } as unknown as Logger;

describe('log scrubber', () => {
  const { open } = useTempLogs('log-scrubber');

  function logWithEverything(): Log {
    const log = open();
    log.append([windowConfigEntry(1, { bucketMs: 1_000, retentionMs: 60_000 })], 1n, 900);
    for (let commit = 0; commit < 10; commit++)
      log.append(
        Array.from({ length: 20 }, (_, index) =>
          plainEntry(1 + ((commit * 20 + index) % 300), BigInt(index + 1), index % 7 === 0 ? `k${commit}-${index}` : ''),
        ),
        1n,
        1_000 + commit,
      );
    while (log.foldSlice(101n, 500, 0, 2_000) > 0);
    return log;
  }

  function scrubberOf(log: Log, entriesPerSecond = 50) {
    const seen = { entries: 0, blocks: 0, parts: 0, passes: 0, mismatches: [] as string[], damaged: [] as string[] };
    log.onDamage = (error) => seen.damaged.push((error as Error).message);
    const scrubber = new LogScrubber(
      log,
      { entriesPerSecond, stepsPerSecond: 10 },
      {
        onRead: (kind, count) => void (seen[kind] += count),
        onPass: () => void seen.passes++,
        onMismatch: (error) => void seen.mismatches.push(error.message),
      },
      logger,
    );
    return { scrubber, seen };
  }

  it('a pass reads every entry the log keeps, every block and every part, in steps of its rate, then starts over', () => {
    const log = logWithEverything();
    const { scrubber, seen } = scrubberOf(log);
    for (let step = 0; step < 200 && seen.passes < 2; step++) scrubber.step();
    expect(seen.passes).toBe(2);
    expect(seen.mismatches).toEqual([]);
    // Two passes: the tail (lsn 102..201) and the keyed rows the fold kept, twice; blocks and the window part twice.
    expect(seen.entries).toBeGreaterThanOrEqual(2 * 100);
    expect(seen.blocks).toBeGreaterThanOrEqual(2);
    expect(seen.parts).toBe(2);
  });

  for (const [name, sql] of [
    ['an entry', 'UPDATE log SET amount = amount + 1 WHERE lsn = (SELECT max(lsn) FROM log)'],
    ['a block', "UPDATE checkpoint_blocks SET data = data || x'00'"],
    ['a part', 'UPDATE checkpoint_parts SET data = zeroblob(length(data))'],
  ] as const) {
    it(`${name} moved on the disk is counted and handed to onDamage within one pass`, () => {
      const log = logWithEverything();
      const db = new Database(path.join(path.dirname(log.file), 'node.sqlite'));
      try {
        expect(db.prepare(sql).run().changes).toBeGreaterThan(0);
      } finally {
        db.close();
      }
      const { scrubber, seen } = scrubberOf(log);
      for (let step = 0; step < 200 && seen.damaged.length === 0; step++) scrubber.step();
      expect(seen.mismatches).toHaveLength(1);
      expect(seen.damaged[0]).toMatch(/checksum/);
    });
  }
});
