// A service writing outbox rows at a steady pace, in its own process (so the
// relay's process and this one do not share an event loop):
//   node --import tsx bench/throughput/outbox-writer.mts --url URL --table T --rate 5000 --seconds 20 [--rows-per-tx 1] [--connections 8] [--counters 1000]
// Each transaction inserts rows-per-tx rows; transactions start on a fixed
// schedule across the connections. Prints one JSON line: rows written and
// how far behind schedule the writer fell (a writer that cannot keep the
// rate says so instead of quietly writing less).
import { performance } from 'node:perf_hooks';
import pg from 'pg';

function flag(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? process.argv[index + 1]! : fallback;
}
const url = flag('url', '');
const table = flag('table', 'tally_outbox');
const ratePerSec = Number(flag('rate', '5000'));
const seconds = Number(flag('seconds', '20'));
const rowsPerTx = Number(flag('rows-per-tx', '1'));
const connectionCount = Number(flag('connections', '8'));
const counterCount = Number(flag('counters', '1000'));
if (!/^[a-z_][a-z0-9_]*$/.test(table)) throw new Error('--table must be a plain table name');

const txPerSec = ratePerSec / rowsPerTx;
const txTotal = Math.round(txPerSec * seconds);
const values = Array.from({ length: rowsPerTx }, (_, index) => `($${index * 2 + 1}, $${index * 2 + 2})`).join(', ');
const statement = `INSERT INTO ${table} (counter, amount) VALUES ${values}`;

const clients = await Promise.all(
  Array.from({ length: connectionCount }, async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return client;
  }),
);
const startedMs = performance.now();
let next = 0;
let rowsWritten = 0;
let worstLateMs = 0;
await Promise.all(
  clients.map(async (client) => {
    for (;;) {
      const txIndex = next++;
      if (txIndex >= txTotal) return;
      const dueMs = startedMs + (txIndex * 1000) / txPerSec;
      const waitMs = dueMs - performance.now();
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
      else worstLateMs = Math.max(worstLateMs, -waitMs);
      const parameters = Array.from({ length: rowsPerTx }, (_, index) => [
        `bench:${(txIndex * rowsPerTx + index) % counterCount}`,
        1,
      ]).flat();
      await client.query(statement, parameters);
      rowsWritten += rowsPerTx;
    }
  }),
);
const elapsedSec = (performance.now() - startedMs) / 1000;
await Promise.all(clients.map((client) => client.end()));
process.stdout.write(
  `${JSON.stringify({ rowsWritten, elapsedSec, rowsPerSec: Math.round(rowsWritten / elapsedSec), worstLateMs: Math.round(worstLateMs) })}\n`,
);
