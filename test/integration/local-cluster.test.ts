// `npm start`'s launcher: prints where everything listens once ready, stops
// every child on SIGINT, and a second start on the same data keeps totals.
// Run from source like every test; one test runs a fresh build as npm start does.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../src/cluster/managed-process.ts';
import { createTallyClient } from '../../src/client/index.ts';
import { freshBuild } from '../helpers/build.ts';
import { waitFor } from '../helpers/cluster.ts';
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.ts';

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A run of free loopback ports, probed then closed: racy, so only for what
 * needs ports named before the processes start. The launcher numbers nodes
 * from one base port, and a second launch on the same data must find them on
 * the same ports (the router's directory records their addresses).
 */
async function freePortRun(length: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    let free = true;
    for (let offset = 0; offset < length && free; offset++) free = await portIsFree(base + offset);
    if (free) return base;
  }
  throw new Error('no run of free ports');
}

/** The router's address as the launcher printed it once ready. */
function routerAddressOf(output: string): string {
  const match = /^ {2}router {5}(127\.0\.0\.1:\d+)/m.exec(output);
  if (match === null) throw new Error(`the launcher printed no router address: ${output}`);
  return match[1]!;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('local cluster launcher (npm start)', () => {
  const dataDir = makeTempDir('launcher');
  const launched: ChildProcess[] = [];
  afterAll(() => {
    for (const child of launched) child.kill('SIGKILL');
    removeTempDir(dataDir);
  });

  const fromSource = { root: repoRoot, main: ['--import', 'tsx', 'src/cluster/main.ts'] };

  async function launch(
    port: number,
    nodeBasePort: number,
    subDir: string,
    entry = fromSource,
  ): Promise<{ child: ChildProcess; output: () => string }> {
    const args = [
      '--port',
      String(port),
      '--node-base-port',
      String(nodeBasePort),
      '--metrics-port',
      '0',
      '--http-port',
      '0',
      '--data-dir',
      path.join(dataDir, subDir),
    ];
    const child = spawn(process.execPath, [...entry.main, ...args], {
      cwd: entry.root,
    });
    launched.push(child);
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    try {
      await waitFor(() => output.includes('Tally local cluster ready'), { timeoutMs: 30_000, what: 'the launcher to be ready' });
    } catch (error) {
      throw new Error(`${(error as Error).message}; its output: ${output}`, { cause: error });
    }
    return { child, output: () => output };
  }

  it('serves a cluster, stops every child on SIGINT, and keeps totals across restarts', async () => {
    const nodeBasePort = await freePortRun(4);
    // The router may take any port the first time; the second launch asks for the one it printed.
    const first = await launch(0, nodeBasePort, 'restarts');
    const routerAddress = routerAddressOf(first.output());
    expect(routerAddress).not.toBe('127.0.0.1:0');
    const port = Number(routerAddress.split(':')[1]);
    expect(first.output()).toContain(`node 1 follower    127.0.0.1:${nodeBasePort + 3}`);
    const client = createTallyClient({ address: routerAddress });
    await client.increment('launcher', 42);
    const pids = (await client.clusterStatus()).nodes.map((node) => node.pid);
    expect(pids.every((pid) => pid > 0)).toBe(true);

    const exited = new Promise<number | null>((resolve) => first.child.once('exit', (code) => resolve(code)));
    first.child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(first.output()).toContain('stopped.');
    for (const pid of pids) expect(isAlive(pid)).toBe(false);

    const second = await launch(port, nodeBasePort, 'restarts');
    const read = await waitFor(() => client.read('launcher'), { timeoutMs: 10_000, what: 'the second cluster' });
    expect(read.total).toBe(42n);
    client.close();
    const secondExited = new Promise<number | null>((resolve) => second.child.once('exit', (code) => resolve(code)));
    second.child.kill('SIGTERM');
    expect(await secondExited).toBe(0);
  });

  it('children stop by themselves when the launcher is SIGKILLed', async () => {
    const { child, output } = await launch(0, 0, 'orphans');
    const client = createTallyClient({ address: routerAddressOf(output()) });
    const pids = (await client.clusterStatus()).nodes.map((node) => node.pid);
    client.close();
    child.kill('SIGKILL');
    await waitFor(() => pids.every((pid) => !isAlive(pid)), { timeoutMs: 15_000, what: 'orphaned nodes to exit' });
  });

  it(
    'a fresh build runs as plain JavaScript: dist/cluster/main.js starts dist/ children without tsx installed, and bin/tally.mjs answers',
    { timeout: 120_000 },
    async () => {
      const build = await freshBuild();
      try {
        // What `npm start` runs after its prestart build, on ports the kernel picks.
        const { child, output } = await launch(0, 0, 'built', { root: build.root, main: ['dist/cluster/main.js'] });
        const routerAddress = routerAddressOf(output());
        const builtTally = async (...args: string[]): Promise<string> =>
          (
            await promisify(execFile)(process.execPath, [path.join(build.root, 'bin/tally.mjs'), ...args, '--router', routerAddress], {
              cwd: build.root,
            })
          ).stdout;
        expect(await builtTally('incr', 'built', '7')).toMatch(/^applied: built \+7/);
        expect((await builtTally('get', 'built')).trim()).toBe('built = 7 (exact, 1 shard)');
        const nodes = JSON.parse(await builtTally('status', '--json')).nodes as { health: string }[];
        expect(nodes.map((node) => node.health)).toEqual(['SERVING', 'SERVING', 'SERVING', 'SERVING']);
        const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
        child.kill('SIGINT');
        expect(await exited).toBe(0);
      } finally {
        build.remove();
      }
    },
  );

  it('a bad flag is one line and exit code 2', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cluster/main.ts', '--pairs', 'many'], { cwd: repoRoot });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(stderr.trim()).toBe('config error: --pairs must be a whole number, got "many"');
  });
});
