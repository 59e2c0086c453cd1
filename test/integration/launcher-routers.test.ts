// `npm start -- --routers N`: a local etcd and N routers sharing the
// directory in it; the launcher restarts a router or etcd that dies, stops
// routers, then nodes, then etcd on SIGINT, and says in one line when etcd is
// missing. Run from source like every launcher test.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { etcdMissingMessage } from '../../src/cluster/etcd-process.ts';
import { repoRoot } from '../../src/cluster/managed-process.ts';
import { createTallyClient, type TallyClient } from '../../src/client/index.ts';
import { waitFor } from '../helpers/cluster.ts';
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.ts';

interface Launched {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every router's address as the launcher printed it once ready, by name. */
function routerAddressesOf(output: string): Map<string, string> {
  const addresses = new Map<string, string>();
  for (const match of output.matchAll(/^ {2}(router-\d+) +(127\.0\.0\.1:\d+)/gm)) addresses.set(match[1]!, match[2]!);
  return addresses;
}

/** The pid in the latest "ready" line a child logged (the launcher prints those with the child's name). */
function readyPidOf(output: string, name: string): number | undefined {
  let pid: number | undefined;
  for (const line of output.split('\n')) {
    if (!line.startsWith(`[${name}] `) || !line.includes('"msg":"ready"')) continue;
    pid = (JSON.parse(line.slice(name.length + 3)) as { pid: number }).pid;
  }
  return pid;
}

/** The pid of the etcd whose data directory is etcdDir (Linux: /proc). */
function etcdPidOf(etcdDir: string): number | undefined {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (path.basename(argv[0] ?? '') === 'etcd' && argv[argv.indexOf('--data-dir') + 1] === etcdDir) return Number(entry);
  }
  return undefined;
}

describe('launcher with several routers (npm start -- --routers N)', () => {
  const dataDir = makeTempDir('launcher-routers');
  const launched: ChildProcess[] = [];
  const clients: TallyClient[] = [];
  afterAll(() => {
    for (const client of clients) client.close();
    for (const child of launched) child.kill('SIGKILL');
    removeTempDir(dataDir);
  });

  function launch(args: string[], env: NodeJS.ProcessEnv = process.env): Launched {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cluster/main.ts', ...args], { cwd: repoRoot, env });
    launched.push(child);
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, output: () => output, exited };
  }

  async function launchRouters(subDir: string, routerCount: number): Promise<Launched> {
    const started = launch([
      '--routers',
      String(routerCount),
      '--port',
      '0',
      '--node-base-port',
      '0',
      '--metrics-port',
      '0',
      '--http-port',
      '0',
      '--pairs',
      '1',
      '--data-dir',
      path.join(dataDir, subDir),
    ]);
    try {
      await waitFor(
        () => {
          if (started.child.exitCode !== null) throw new Error(`the launcher exited (${started.child.exitCode})`);
          return started.output().includes('Tally local cluster ready');
        },
        { timeoutMs: 40_000, what: 'the launcher to be ready' },
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}; its output: ${started.output()}`, { cause: error });
    }
    return started;
  }

  function clientOf(address: string): TallyClient {
    const client = createTallyClient({ address, deadlineMs: 10_000 });
    clients.push(client);
    return client;
  }

  it(
    '--routers 2 serves one directory through both routers, restarts a SIGKILLed router and a SIGKILLed etcd, and SIGINT stops routers, then nodes, then etcd',
    { timeout: 120_000 },
    async () => {
      const started = await launchRouters('two', 2);
      const addresses = routerAddressesOf(started.output());
      expect([...addresses.keys()]).toEqual(['router-1', 'router-2']);
      expect(new Set(addresses.values()).size).toBe(2);
      const first = clientOf(addresses.get('router-1')!);
      const second = clientOf(addresses.get('router-2')!);

      // One directory: created through router-1, read through router-2.
      await first.increment('launched', 5);
      expect((await waitFor(() => second.read('launched'), { timeoutMs: 10_000, what: 'router-2 to read it' })).total).toBe(5n);

      // A SIGKILLed router comes back on the same address and answers again.
      const killedPid = readyPidOf(started.output(), 'router-2')!;
      expect(killedPid).toBeGreaterThan(0);
      process.kill(killedPid, 'SIGKILL');
      await waitFor(() => started.output().includes('router-2 restarted'), { timeoutMs: 30_000, what: 'the launcher to restart router-2' });
      expect(started.output()).toContain('router-2 exited unexpectedly (killed by a signal)');
      expect(readyPidOf(started.output(), 'router-2')).not.toBe(killedPid);
      await second.increment('launched', 2);
      expect((await first.read('launched')).total).toBe(7n);

      // A SIGKILLed etcd too: same data, same port, writes go through again.
      const etcdDir = path.join(dataDir, 'two', 'etcd');
      const etcdPid = etcdPidOf(etcdDir)!;
      expect(etcdPid).toBeGreaterThan(0);
      process.kill(etcdPid, 'SIGKILL');
      await waitFor(() => started.output().includes('etcd restarted'), { timeoutMs: 30_000, what: 'the launcher to restart etcd' });
      await waitFor(() => second.increment('launched', 1), { timeoutMs: 30_000, what: 'a write after etcd restarted' });
      // Each router proves its own watch current again: router-1 may still be reconnecting.
      expect(
        (await waitFor(() => first.read('launched'), { timeoutMs: 30_000, what: 'router-1 to read after etcd restarted' })).total,
      ).toBe(8n);

      const nodePids = (await first.clusterStatus()).nodes.map((node) => node.pid);
      const routerPids = ['router-1', 'router-2'].map((name) => readyPidOf(started.output(), name)!);
      const restartedEtcdPid = etcdPidOf(etcdDir)!;
      started.child.kill('SIGINT');
      expect(await started.exited).toBe(0);
      const lines = started.output().split('\n');
      const lastRouterStopped = Math.max(
        ...['router-1', 'router-2'].map((name) =>
          lines.findIndex((line) => line.startsWith(`[${name}] `) && line.includes('"msg":"stopped"')),
        ),
      );
      const firstNodeShutdown = lines.findIndex((line) => line.startsWith('[node-') && line.includes('"msg":"shutdown"'));
      expect(lastRouterStopped).toBeGreaterThan(0);
      expect(firstNodeShutdown, 'routers stop before the nodes are told to').toBeGreaterThan(lastRouterStopped);
      for (const pid of [...nodePids, ...routerPids, restartedEtcdPid]) expect(isAlive(pid), `pid ${pid}`).toBe(false);
    },
  );

  it('every child, etcd included, stops by itself when the launcher is SIGKILLed', { timeout: 90_000 }, async () => {
    const started = await launchRouters('orphans', 2);
    const etcdPid = etcdPidOf(path.join(dataDir, 'orphans', 'etcd'))!;
    const client = clientOf(routerAddressesOf(started.output()).get('router-1')!);
    const pids = [
      etcdPid,
      ...['router-1', 'router-2'].map((name) => readyPidOf(started.output(), name)!),
      ...(await client.clusterStatus()).nodes.map((node) => node.pid),
    ];
    expect(pids.every((pid) => pid > 0)).toBe(true);
    started.child.kill('SIGKILL');
    await waitFor(() => pids.every((pid) => !isAlive(pid)), { timeoutMs: 15_000, what: 'orphaned children, etcd included, to exit' });
  });

  it('--routers 2 without etcd on PATH is one line naming the Debian package, exit code 1, and nothing started', async () => {
    const bare = path.join(dataDir, 'no-etcd');
    const started = launch(['--routers', '2', '--data-dir', bare], { ...process.env, PATH: path.join(dataDir, 'empty-path') });
    expect(await started.exited).toBe(1);
    expect(started.output()).toBe(`fatal: ${etcdMissingMessage}\n`);
    expect(etcdMissingMessage).toContain('etcd-server');
    expect(fs.existsSync(bare)).toBe(false);
  });
});
