// What operators run: the compose file (checked by docker-compose itself and
// for shape), the Grafana dashboard (every metric it queries exists), a real
// Prometheus scraping a local cluster, and SIGTERM under load.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { repoRoot } from '../../src/cluster/managed-process.ts';
import { parseNodeConfig } from '../../src/node/config.ts';
import { parseRouterConfig } from '../../src/router/config.ts';
import { metricsText, scrapeMetric, startCluster, waitFor, type TestCluster } from '../helpers/cluster.ts';
import { startLoad } from '../helpers/load.ts';
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.ts';

function installed(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Fails (never skips) a test whose tool is missing: .ci/run installs these Debian packages. */
function requireInstalled(command: string, debianPackage: string): void {
  if (!installed(command))
    throw new Error(
      `${command} is not installed: it comes from the Debian package ${debianPackage} (apt-get install ${debianPackage}; .ci/run installs it)`,
    );
}

/** Prometheus on a loopback port of its own choosing: its "Listening on" log line names the address it bound. */
async function startPrometheus(promDir: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    'prometheus',
    [
      `--config.file=${path.join(promDir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(promDir, 'data')}`,
      '--web.listen-address=127.0.0.1:0',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const lines: string[] = [];
  // Read every line for as long as it runs: a full pipe would stall Prometheus.
  readline.createInterface({ input: child.stderr! }).on('line', (line) => lines.push(line));
  try {
    const port = await waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode})`);
        const match = lines.map((line) => /msg="Listening on" address=127\.0\.0\.1:(\d+)/.exec(line)).find((found) => found !== null);
        return match === undefined ? undefined : Number(match[1]);
      },
      { timeoutMs: 20_000, what: 'Prometheus to report the port it listens on' },
    );
    return { child, port };
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}; its log: ${lines.slice(-5).join(' | ')}`, { cause: error });
  }
}

interface ComposeService {
  command?: string[];
  environment?: Record<string, string>;
  volumes?: (string | { source?: string; target?: string })[];
  healthcheck?: { test?: string[] };
  ports?: (string | { host_ip?: string; published?: number | string; target?: number })[];
}

describe('operations', () => {
  let tc: TestCluster | undefined;
  let prometheus: ChildProcess | undefined;
  afterEach(async () => {
    prometheus?.kill('SIGKILL');
    prometheus = undefined;
    await tc?.stop();
    tc = undefined;
  });

  it('compose: every published port binds 127.0.0.1, and Grafana has no anonymous access unless asked for', () => {
    requireInstalled('docker-compose', 'docker-compose');
    const normalized = execFileSync('docker-compose', ['-f', path.join(repoRoot, 'docker-compose.yml'), 'config'], {
      cwd: repoRoot,
      encoding: 'utf8',
      env: { ...process.env, GRAFANA_ANONYMOUS: '' },
    });
    const services = (parseYaml(normalized) as { services: Record<string, ComposeService> }).services;
    const published: string[] = [];
    for (const [name, service] of Object.entries(services)) {
      for (const port of service.ports ?? []) {
        const hostIp = typeof port === 'string' ? port.split(':')[0] : port.host_ip;
        published.push(`${name} ${typeof port === 'string' ? port : JSON.stringify(port)}`);
        expect(hostIp, `${name} publishes ${JSON.stringify(port)} beyond loopback`).toBe('127.0.0.1');
      }
    }
    expect(published.length).toBeGreaterThanOrEqual(3);
    expect(services.grafana!.environment!.GF_AUTH_ANONYMOUS_ENABLED).toBe('false');
  });

  it('compose: docker-compose accepts the file; every node has its own volume, pairs span two services, two routers share etcd, Prometheus scrapes every process, every service has a health check', () => {
    requireInstalled('docker-compose', 'docker-compose');
    const normalized = execFileSync('docker-compose', ['-f', path.join(repoRoot, 'docker-compose.yml'), 'config'], {
      cwd: repoRoot,
      encoding: 'utf8',
    });
    const services = (parseYaml(normalized) as { services: Record<string, ComposeService> }).services;
    const nodes = Object.keys(services).filter((name) => name.startsWith('node-'));
    expect(nodes).toHaveLength(4);
    const volumeOf = (service: ComposeService): string | undefined => {
      for (const volume of service.volumes ?? []) {
        const [source, target] = typeof volume === 'string' ? volume.split(':') : [volume.source, volume.target];
        if (target === '/data') return source;
      }
      return undefined;
    };
    const nodeVolumes = nodes.map((name) => volumeOf(services[name]!));
    expect(nodeVolumes.every((volume) => volume !== undefined)).toBe(true);
    expect(new Set(nodeVolumes).size).toBe(4);
    // Plaintext, accepted explicitly: in the command, so the TLS override can drop it.
    for (const name of nodes) expect(services[name]!.command).toEqual(['node', '--insecure']);

    const router = services.router!;
    const routers = Object.keys(services).filter((name) => name.startsWith('router'));
    expect(routers).toEqual(['router', 'router-2']);
    const etcd = services.etcd!;
    // One etcd, on the compose network only, its data in a volume; the routers use the URL it advertises.
    expect(etcd.ports ?? []).toEqual([]);
    expect(volumeOf(etcd)).toBeDefined();
    expect(etcd.command).toContain('--data-dir=/data/etcd');
    expect(etcd.command).toContain('--advertise-client-urls=http://etcd:2379');
    for (const name of routers) {
      const service = services[name]!;
      // No tokens here, accepted explicitly: the router refuses to serve 0.0.0.0 open otherwise.
      expect(service.command, name).toEqual(['router', '--insecure', '--allow-unauthenticated']);
      expect(service.environment!.TALLY_ETCD, name).toBe('http://etcd:2379');
      expect(service.environment!.TALLY_PAIRS, name).toBe(router.environment!.TALLY_PAIRS);
      // The processes accept what compose gives them (the config errors a container would die of, caught here),
      // and read the directory from etcd under their own id (fails until the router knows TALLY_ETCD).
      const parsed = JSON.stringify(parseRouterConfig(service.command!.slice(1), { ...service.environment }));
      expect(parsed, name).toContain('"http://etcd:2379"');
      expect(parsed, name).toContain(`"${service.environment!.TALLY_ROUTER_ID}"`);
    }
    // Both containers would have the same default id (listen address and pid 1).
    expect(new Set(routers.map((name) => services[name]!.environment!.TALLY_ROUTER_ID)).size).toBe(2);
    expect(new Set([...nodes, ...routers, 'etcd'].map((name) => volumeOf(services[name]!))).size).toBe(nodes.length + 3);
    expect(services.cli!.environment!.TALLY_ROUTER).toBe('router:50051,router-2:50051');
    for (const name of nodes)
      expect(() => parseNodeConfig(services[name]!.command!.slice(1), { ...services[name]!.environment })).not.toThrow();
    const pairs = router.environment!.TALLY_PAIRS!.split(';').map((pair) => pair.split(',').map((member) => member.split(':')[0]!));
    expect(pairs).toHaveLength(2);
    for (const [primary, follower] of pairs) {
      expect(primary).not.toBe(follower);
      expect(nodes).toContain(primary);
      expect(nodes).toContain(follower);
    }
    expect(new Set(pairs.flat()).size).toBe(4);

    const scrape = parseYaml(fs.readFileSync(path.join(repoRoot, 'deploy/prometheus/prometheus.yml'), 'utf8')) as {
      scrape_configs: { static_configs: { targets: string[] }[] }[];
    };
    const targets = new Set(scrape.scrape_configs.flatMap((job) => job.static_configs.flatMap((config) => config.targets)));
    for (const name of routers) expect(targets.has(`${name}:${services[name]!.environment!.TALLY_METRICS_PORT}`), name).toBe(true);
    for (const name of nodes) expect(targets.has(`${name}:${services[name]!.environment!.TALLY_METRICS_PORT}`)).toBe(true);
    expect(targets.has('etcd:2381')).toBe(true);
    expect(etcd.command).toContain('--listen-metrics-urls=http://0.0.0.0:2381');

    for (const name of [...nodes, ...routers, 'etcd', 'prometheus', 'grafana'])
      expect(services[name]!.healthcheck?.test?.length, name).toBeGreaterThan(0);
    expect(
      services.grafana!.volumes!.some((volume) => String(typeof volume === 'string' ? volume : volume.source).includes('dashboards')),
    ).toBe(true);
  });

  it('compose with docker-compose.tls.yml: TLS on every Tally service with its own certificate, tokens on the router, no --insecure, ports on 127.0.0.1, only files make-certs.sh writes', () => {
    requireInstalled('docker-compose', 'docker-compose');
    const normalized = execFileSync(
      'docker-compose',
      ['-f', path.join(repoRoot, 'docker-compose.yml'), '-f', path.join(repoRoot, 'docker-compose.tls.yml'), 'config'],
      { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, GRAFANA_ANONYMOUS: '' } },
    );
    const services = (parseYaml(normalized) as { services: Record<string, ComposeService> }).services;
    for (const [name, service] of Object.entries(services)) {
      for (const port of service.ports ?? []) {
        const hostIp = typeof port === 'string' ? port.split(':')[0] : port.host_ip;
        expect(hostIp, `${name} publishes ${JSON.stringify(port)} beyond loopback`).toBe('127.0.0.1');
      }
      expect(service.environment?.TALLY_INSECURE, name).toBeUndefined();
      expect(service.command ?? [], name).not.toContain('--insecure');
      expect(service.command ?? [], name).not.toContain('--allow-unauthenticated');
    }
    expect(services.grafana!.environment!.GF_AUTH_ANONYMOUS_ENABLED).toBe('false');

    // What make-certs.sh writes for the compose cluster (its default 2 pairs).
    const certDir = makeTempDir('compose-certs');
    let written: string[];
    try {
      execFileSync(path.join(repoRoot, 'scripts/make-certs.sh'), [certDir], { stdio: 'ignore' });
      written = fs.readdirSync(certDir);
    } finally {
      removeTempDir(certDir);
    }
    const nodes = Object.keys(services).filter((name) => name.startsWith('node-'));
    expect(nodes).toHaveLength(4);
    const fileSettings = [
      'TALLY_TLS_CERT',
      'TALLY_TLS_KEY',
      'TALLY_TLS_CA',
      'TALLY_ADMIN_TOKEN_FILE',
      'TALLY_CLIENT_TOKEN_FILE',
      'TALLY_TOKEN_FILE',
      'TALLY_ETCD_TLS_CA',
      'TALLY_ETCD_TLS_CERT',
      'TALLY_ETCD_TLS_KEY',
    ];
    for (const name of [...nodes, 'router', 'router-2', 'cli']) {
      const service = services[name]!;
      const environment = service.environment ?? {};
      // Every file a setting names is mounted read-only from ./certs, and is one make-certs.sh writes;
      // nothing else from ./certs is mounted (never ca.key, never another node's key).
      const mounts = new Map<string, string>();
      for (const volume of service.volumes ?? []) {
        const [source, target, mode] =
          typeof volume === 'string'
            ? volume.split(':')
            : [volume.source, volume.target, (volume as { read_only?: boolean }).read_only ? 'ro' : 'rw'];
        if (!String(source).startsWith(path.join(repoRoot, 'certs') + path.sep)) continue;
        expect(mode, `${name} mounts ${source} writable`).toBe('ro');
        mounts.set(String(target), path.basename(String(source)));
      }
      const named = fileSettings.filter((key) => environment[key] !== undefined).map((key) => environment[key]!);
      expect([...mounts.keys()].sort(), name).toEqual([...named].sort());
      for (const target of named) {
        expect(mounts.get(target), `${name}: ${target}`).toBe(path.basename(target));
        expect(written, `${name}: ${target}`).toContain(path.basename(target));
      }
      expect([...mounts.values()], name).not.toContain('ca.key');
    }
    // TLS with each node's own certificate and key (the name make-certs.sh gives it).
    for (const name of nodes) {
      const environment = services[name]!.environment!;
      expect(services[name]!.command).toEqual(['node']);
      expect(environment.TALLY_TLS_CERT).toBe(`/certs/${name}.crt`);
      expect(environment.TALLY_TLS_KEY).toBe(`/certs/${name}.key`);
      expect(environment.TALLY_TLS_CA).toBe('/certs/ca.crt');
    }
    // Both routers: one identity (the certificate names both services), both tokens.
    for (const name of ['router', 'router-2']) {
      const router = services[name]!;
      expect(router.command, name).toEqual(['router']);
      expect(router.environment, name).toMatchObject({
        TALLY_TLS_CERT: '/certs/router.crt',
        TALLY_TLS_KEY: '/certs/router.key',
        TALLY_TLS_CA: '/certs/ca.crt',
        TALLY_ADMIN_TOKEN_FILE: '/certs/admin.token',
        TALLY_CLIENT_TOKEN_FILE: '/certs/client.token',
        // The directory over TLS, with the certificate only etcd's own CA signed.
        TALLY_ETCD: 'https://etcd:2379',
        TALLY_ETCD_TLS_CA: '/certs/etcd-ca.crt',
        TALLY_ETCD_TLS_CERT: '/certs/etcd-client.crt',
        TALLY_ETCD_TLS_KEY: '/certs/etcd-client.key',
      });
    }
    // etcd serves TLS and requires a client certificate of its own CA; never a key of the Tally CA.
    const etcdCommand = services.etcd!.command as string[];
    expect(etcdCommand).toEqual(
      expect.arrayContaining(['--client-cert-auth', '--trusted-ca-file=/certs/etcd-ca.crt', '--listen-client-urls=https://0.0.0.0:2379']),
    );
    const etcdMounts = (services.etcd!.volumes ?? []).map((volume) =>
      path.basename(String(typeof volume === 'string' ? volume.split(':')[0] : volume.source)),
    );
    expect(etcdMounts).not.toContain('ca.key');
    expect(etcdMounts).not.toContain('etcd-ca.key');
    expect(services.cli!.environment).toMatchObject({ TALLY_TLS_CA: '/certs/ca.crt', TALLY_TOKEN_FILE: '/certs/admin.token' });
    // The health checks run the CLI in the same container: it reads the same TALLY_TLS_* variables.
    for (const name of [...nodes, 'router', 'router-2']) expect(services[name]!.healthcheck?.test, name).toContain('health');
  });

  // Dashboard and Prometheus only read a live cluster: they share one, each
  // counting from what the processes had counted at its start.
  describe('on one running cluster', () => {
    let live: TestCluster;
    beforeAll(async () => {
      live = await startCluster({ pairs: 1, metrics: true });
    });
    afterAll(async () => {
      await live?.stop();
    });

    it('dashboard: every tally_ metric the Grafana dashboard queries exists on a live endpoint', async () => {
      const tc = live;
      await tc.client.increment('dash', 1);
      await tc.client.reconcile();
      const dashboard = JSON.parse(fs.readFileSync(path.join(repoRoot, 'deploy/grafana/dashboards/tally.json'), 'utf8')) as {
        panels: { targets: { expr: string }[] }[];
      };
      const queried = new Set(
        dashboard.panels.flatMap((panel) =>
          panel.targets.flatMap((target) => [...target.expr.matchAll(/\b(tally_[a-z_]+)/g)].map((match) => match[1]!)),
        ),
      );
      const bodies = await Promise.all([tc.routerMetricsPort, ...tc.cluster.nodes.map((node) => node.metricsPort)].map(metricsText));
      const exported = new Set(
        bodies.flatMap((body) =>
          [...body.matchAll(/^# TYPE (tally_[a-z_]+) (\w+)/gm)].flatMap((match) =>
            match[2] === 'histogram' ? [`${match[1]}_bucket`, `${match[1]}_sum`, `${match[1]}_count`] : [match[1]!],
          ),
        ),
      );
      expect(queried.size).toBeGreaterThan(15);
      for (const name of queried) expect(exported.has(name), `${name} is queried by the dashboard but not exported`).toBe(true);
    });

    it(
      'prometheus: a real Prometheus scraping a local cluster reports exactly the increments the cluster accepted',
      { timeout: 90_000 },
      async () => {
        requireInstalled('prometheus', 'prometheus');
        const tc = live;
        const promDir = makeTempDir('prometheus');
        const targets = [tc.routerMetricsPort, ...tc.cluster.nodes.map((node) => node.metricsPort)].map((port) => `"127.0.0.1:${port}"`);
        fs.writeFileSync(
          path.join(promDir, 'prometheus.yml'),
          `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: tally\n    static_configs:\n      - targets: [${targets.join(', ')}]\n`,
        );
        const started = await startPrometheus(promDir);
        prometheus = started.child;
        const { port } = started;
        const query = async (expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> => {
          const response = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(expr)}`);
          return ((await response.json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } }).data
            .result;
        };
        // What the processes counted before this case's increments, from the cases before it.
        const scrapedSum = async (port: number, name: string): Promise<number> => scrapeMetric(port, name).catch(() => 0);
        const acceptedBefore = (
          await Promise.all(
            [tc.routerMetricsPort, ...tc.cluster.nodes.map((node) => node.metricsPort)].map((port) =>
              scrapedSum(port, 'tally_increments_accepted_total'),
            ),
          )
        ).reduce((sum, count) => sum + count, 0);
        const appliedBefore = Math.max(
          ...(await Promise.all(tc.cluster.nodes.map((node) => scrapedSum(node.metricsPort, 'tally_node_increments_applied_total')))),
        );
        for (let batch = 0; batch < 5; batch++)
          await tc.client.incrementBatch(Array.from({ length: 100 }, () => ({ counter: 'scraped', amount: 1 })));
        await waitFor(
          async () => {
            const result = await query('sum(tally_increments_accepted_total)');
            return result.length === 1 && result[0]!.value[1] === String(acceptedBefore + 500);
          },
          { timeoutMs: 40_000, intervalMs: 500, what: 'Prometheus to see 500 accepted increments' },
        );
        // Every process scraped and up (each target's first scrape may lag the others by an interval).
        await waitFor(
          async () => {
            const up = await query('up');
            return up.length === 3 && up.every((series) => series.value[1] === '1');
          },
          { timeoutMs: 20_000, intervalMs: 500, what: 'all three targets up' },
        );
        const committed = await query('sum by (node) (tally_node_increments_applied_total)');
        expect(committed.map((series) => series.value[1])).toContain(String(appliedBefore + 500));
        removeTempDir(promDir);
      },
    );
  });

  it('shutdown: SIGTERM under load drains and exits within the bound, and nothing acknowledged is lost', { timeout: 90_000 }, async () => {
    const bound = ['--shutdown-timeout-ms', '3000'];
    tc = await startCluster({ pairs: 1, routerArgs: bound, nodeArgs: bound });
    const { client, cluster } = tc;
    await client.increment('drained', 1, { idempotencyKey: null });
    await waitFor(async () => (await client.clusterStatus()).nodes.every((node) => node.inSync), { timeoutMs: 10_000, what: 'in sync' });
    const load = startLoad(client, { concurrency: 16, counters: () => 'drained' });
    load.ledger.record('drained', 1n, 'ok');
    await waitFor(() => load.ledger.okCalls > 200, { timeoutMs: 20_000, what: 'load' });

    for (const member of [cluster.router, cluster.node(0, 'follower').process, cluster.node(0, 'primary').process]) {
      const startedMs = Date.now();
      await member.stop('SIGTERM', 10_000);
      const tookMs = Date.now() - startedMs;
      expect(await member.exited(), `${member.name} exit code`).toBe(0);
      expect(tookMs, `${member.name} took ${tookMs} ms to stop`).toBeLessThan(3_000 + 1_000);
      await member.start();
      const okBefore = load.ledger.okCalls;
      await waitFor(() => load.ledger.okCalls > okBefore + 50, { timeoutMs: 20_000, what: `writes after ${member.name} restarted` });
    }
    await load.stop();
    await waitFor(async () => (await client.clusterStatus()).nodes.every((node) => node.inSync && node.health === 'SERVING'), {
      timeoutMs: 20_000,
      what: 'in sync again',
    });
    await load.ledger.expectWithinBounds(client);
    expect(tc.logs.some((line) => line.includes('"msg":"shutdown"') && line.includes('"signal":"SIGTERM"'))).toBe(true);
    expect(tc.logs.some((line) => line.includes('"msg":"stopped"'))).toBe(true);
  });
});
