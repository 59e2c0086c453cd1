// A real PostgreSQL for the outbox tests: initdb in a temp directory, the
// postmaster on a free loopback port, stopped (or crashed and restarted) on
// demand. As root it runs as the `postgres` user, which refuses root.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { waitFor } from './cluster.ts';
import { makeTempDir, removeTempDir } from './temp-dir.ts';

/** The newest installed PostgreSQL's bin directory (Debian: /usr/lib/postgresql/<major>/bin). */
export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const majors = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((name) => /^\d+$/.test(name) && fs.existsSync(path.join(root, name, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (majors.length === 0) throw new Error('no PostgreSQL under /usr/lib/postgresql/*/bin (apt-get install postgresql)');
  return path.join(root, majors[0]!, 'bin');
}

/** The uid and gid to run PostgreSQL as: ours, or the `postgres` user's when we are root. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address() as net.AddressInfo;
      server.close(() => resolve(address.port));
    });
  });
}

export interface TestPostgres {
  /** postgresql://tally@127.0.0.1:<port>/postgres (trust authentication on loopback). */
  url: string;
  port: number;
  /** A connected client of the test's own; the test ends it. */
  connect(): Promise<pg.Client>;
  /** Runs one statement on a short-lived connection. */
  query<Row extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<Row[]>;
  /** An immediate shutdown (SIGQUIT: no checkpoint, crash recovery at the next start), then a start on the same port and data. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startPostgres(options: { fsync?: boolean } = {}): Promise<TestPostgres> {
  const binDir = postgresBinDir();
  const dir = makeTempDir('postgres');
  const dataDir = path.join(dir, 'data');
  const identity = runAs();
  if (identity !== undefined) fs.chownSync(dir, identity.uid, identity.gid);
  const spawnOptions = { ...(identity ?? {}), cwd: dir, env: { ...process.env, LC_ALL: 'C' } };
  execFileSync(
    path.join(binDir, 'initdb'),
    ['-D', dataDir, '-U', 'tally', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'],
    {
      ...spawnOptions,
      stdio: 'ignore',
    },
  );
  const port = await freePort();
  const url = `postgresql://tally@127.0.0.1:${port}/postgres`;
  const logs: string[] = [];
  let postmaster: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const start = async (): Promise<void> => {
    const child = spawn(
      path.join(binDir, 'postgres'),
      [
        '-D',
        dataDir,
        '-p',
        String(port),
        '-k',
        dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        `fsync=${options.fsync === false ? 'off' : 'on'}`,
        '-c',
        'max_connections=100',
        '-c',
        'shared_buffers=64MB',
      ],
      { ...spawnOptions, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    postmaster = child;
    exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const keep = (chunk: Buffer): void => {
      logs.push(chunk.toString());
      if (logs.length > 200) logs.shift();
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`postgres exited: ${logs.join('').slice(-500)}`);
        const client = new pg.Client({ connectionString: url });
        client.on('error', () => {});
        try {
          await client.connect();
          await client.query('SELECT 1');
          return true;
        } finally {
          await client.end().catch(() => {});
        }
      },
      { timeoutMs: 30_000, what: 'postgres accepting connections' },
    );
  };

  const halt = async (signal: NodeJS.Signals): Promise<void> => {
    if (postmaster !== undefined && postmaster.exitCode === null && postmaster.signalCode === null) {
      postmaster.kill(signal);
      await exited;
    }
  };

  try {
    await start();
  } catch (error) {
    await halt('SIGQUIT');
    removeTempDir(dir);
    throw error;
  }

  const connect = async (): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => {});
    await client.connect();
    return client;
  };

  return {
    url,
    port,
    connect,
    async query<Row extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<Row[]> {
      const client = await connect();
      try {
        return (await client.query<Row>(text, values)).rows;
      } finally {
        await client.end();
      }
    },
    async restart() {
      await halt('SIGQUIT');
      await start();
    },
    async stop() {
      await halt('SIGQUIT');
      removeTempDir(dir);
    },
  };
}
