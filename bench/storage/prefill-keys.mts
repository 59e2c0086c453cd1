// Writes a node log holding a window of keyed rows (16-byte random keys, the
// last hour, all folded into the checkpoint as the checkpointer leaves them),
// so a bench can start nodes on a log as a busy node has it:
//   node --import tsx bench/storage/prefill-keys.mts <dir> [--keys 2000000] [--schema 5]
// --schema 4 writes the log without the key index, as version 4 did (for a
// side-by-side run of the previous release).
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { ShardLog } from '../../src/node/log/index.ts';

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
}
const dir = process.argv[2];
if (dir === undefined || dir.startsWith('--')) throw new Error('usage: prefill-keys.mts <dir> [--keys N] [--schema 4|5]');
const keyCount = flag('keys', 2_000_000);
const schema = flag('schema', 5);
const shardCount = 1_000;

fs.mkdirSync(dir, { recursive: true });
ShardLog.open(dir).close();
const db = new Database(path.join(dir, 'node.sqlite'));
// Setup only: no fsync per row; the file is checkpointed and synced below.
db.pragma('synchronous = OFF');
db.exec('DROP INDEX IF EXISTS log_keys');
const insert = db.prepare(
  'INSERT INTO log (lsn, epoch, shard_id, amount, idem_key, fence_shard_count, at_ms) VALUES (?, 1, ?, 1, ?, NULL, ?)',
);
const startMs = Date.now() - 3_600_000;
db.transaction(() => {
  // Shard ids far above any a fresh router hands out, so bench counters do not meet them.
  for (let n = 0; n < keyCount; n++)
    insert.run(n + 1, 1_000_000 + (n % shardCount), randomBytes(16), startMs + Math.floor((n * 3_600_000) / keyCount));
})();
db.prepare("INSERT INTO meta (key, value) VALUES ('checkpoint_lsn', ?), ('checkpoint_epoch', '1')").run(String(keyCount));
if (schema === 5) db.exec('CREATE INDEX log_keys ON log (shard_id, idem_key) WHERE idem_key IS NOT NULL');
else db.prepare("UPDATE meta SET value = '4' WHERE key = 'schema_version'").run();
db.pragma('wal_checkpoint(TRUNCATE)');
db.pragma('synchronous = FULL');
db.close();
console.log(JSON.stringify({ dir, keys: keyCount, schema, bytes: fs.statSync(path.join(dir, 'node.sqlite')).size }));
