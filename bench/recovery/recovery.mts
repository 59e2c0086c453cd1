// Log costs on this machine: append rate, bytes per row, recovery by full
// replay vs from a checkpoint, and the longest checkpoint slice (how long a
// fold holds the event loop).
//   node --import tsx bench/recovery/recovery.mts [rows]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ShardLog } from '../../src/node/log/index.ts';
import { NodeMemory } from '../../src/node/state/node-memory.ts';
import { DedupIndex } from '../../src/node/state/dedup-index.ts';
import { rebuildMemory } from '../../src/node/state/recovery.ts';
import { checkpointSliceRows } from '../../src/common/index.ts';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'replay-'));
const n = Number(process.argv[2] ?? 1_000_000);
let log = ShardLog.open(dir);
let t0 = performance.now();
for (let i = 0; i < n; i += 10_000)
  log.append(
    Array.from({ length: 10_000 }, (_, j) => ({
      shardId: 1 + ((i + j) % 1000),
      amount: 1n,
      idempotencyKey: Buffer.alloc(0),
      fenceShardCount: 0,
    })),
    1n,
    Date.now(),
  );
const appendMs = performance.now() - t0;
const bytes =
  fs.statSync(path.join(dir, 'node.sqlite')).size +
  (fs.existsSync(path.join(dir, 'node.sqlite-wal')) ? fs.statSync(path.join(dir, 'node.sqlite-wal')).size : 0);
log.close();
log = ShardLog.open(dir);
t0 = performance.now();
rebuildMemory(log, new NodeMemory(), new DedupIndex(86_400_000), Date.now(), 86_400_000);
const replayMs = performance.now() - t0;
t0 = performance.now();
let worst = 0;
while (true) {
  const s = performance.now();
  const f = log.foldSlice(log.lastLsn, checkpointSliceRows, Date.now());
  worst = Math.max(worst, performance.now() - s);
  if (f === 0) break;
}
const foldMs = performance.now() - t0;
log.close();
log = ShardLog.open(dir);
t0 = performance.now();
rebuildMemory(log, new NodeMemory(), new DedupIndex(86_400_000), Date.now(), 86_400_000);
const afterMs = performance.now() - t0;
console.log(
  JSON.stringify({
    rows: n,
    appendRowsPerSec: Math.round((n / appendMs) * 1000),
    logBytesPerRow: Math.round(bytes / n),
    replayMs: Math.round(replayMs),
    replayRowsPerSec: Math.round((n / replayMs) * 1000),
    foldMs: Math.round(foldMs),
    worstSliceMs: Math.round(worst),
    recoveryAfterFoldMs: Math.round(afterMs),
  }),
);
fs.rmSync(dir, { recursive: true, force: true });
