// Stock gRPC tooling works against every process: grpc.health.v1.Health and
// server reflection; Prometheus metrics are served with the tally_ prefix,
// stock default-metric names, build info and calls by method and code, and
// pass promtool check metrics.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, loadPackageDefinition, makeGenericClientConstructor } from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { service as healthService } from 'grpc-health-check';
import { createTallyClient } from '../../src/client/index.ts';
import { metricsText, startCluster, scrapeMetric, waitFor, type TestCluster } from '../helpers/cluster.ts';
import type { RawRpcClient } from '../helpers/raw-client.ts';

const require = createRequire(import.meta.url);
const reflectionProto = path.join(
  path.dirname(require.resolve('@grpc/reflection/package.json')),
  'build/proto/grpc/reflection/v1/reflection.proto',
);

type Rpc = RawRpcClient;

function healthCheck(address: string, serviceName: string): Promise<string> {
  const HealthClient = makeGenericClientConstructor(healthService as never, 'Health');
  const client = new HealthClient(address, credentials.createInsecure()) as unknown as Rpc;
  return new Promise<string>((resolve, reject) => {
    client.check!({ service: serviceName }, { deadline: Date.now() + 5_000 }, (error: Error | null, response: { status: string }) => {
      client.close();
      if (error) reject(error);
      else resolve(response.status);
    });
  });
}

function listServices(address: string): Promise<string[]> {
  const definition = protoLoader.loadSync(reflectionProto, { keepCase: true });
  const grpcObject = loadPackageDefinition(definition) as unknown as {
    grpc: { reflection: { v1: { ServerReflection: new (...args: unknown[]) => Rpc } } };
  };
  const client = new grpcObject.grpc.reflection.v1.ServerReflection(address, credentials.createInsecure());
  return new Promise((resolve, reject) => {
    const stream = client.ServerReflectionInfo!();
    stream.on('data', (response: { list_services_response?: { service: { name: string }[] } }) => {
      resolve((response.list_services_response?.service ?? []).map((entry) => entry.name));
      stream.end();
      client.close();
    });
    stream.on('error', reject);
    stream.write({ list_services: '' });
  });
}

describe('health, reflection and metrics', () => {
  let tc: TestCluster;
  beforeAll(async () => {
    tc = await startCluster({ pairs: 1, metrics: true });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it('router and nodes: grpc.health.v1 reports SERVING once ready, per service too', async () => {
    expect(await healthCheck(tc.cluster.routerAddress, '')).toBe('SERVING');
    expect(await healthCheck(tc.cluster.routerAddress, 'counter.v1.CounterService')).toBe('SERVING');
    expect(await healthCheck(tc.cluster.routerAddress, 'counter.v1.AdminService')).toBe('SERVING');
    for (const node of tc.cluster.nodes) expect(await healthCheck(node.address, '')).toBe('SERVING');
  });

  it('router and nodes: server reflection lists the services', async () => {
    const routerServices = await listServices(tc.cluster.routerAddress);
    expect(routerServices).toEqual(expect.arrayContaining(['counter.v1.CounterService', 'counter.v1.AdminService']));
    const nodeServices = await listServices(tc.cluster.nodes[0]!.address);
    expect(nodeServices).toEqual(expect.arrayContaining(['tally.shard.v1.ShardNode']));
  });

  it('metrics: increments, rejections, read latency, commit batch size and fsync latency are exported', async () => {
    const acceptedBefore = await scrapeMetric(tc.routerMetricsPort, 'tally_increments_accepted_total');
    await tc.client.incrementBatch(Array.from({ length: 10 }, () => ({ counter: 'metered', amount: 1 })));
    // Unary: the coalescing client would refuse the zero itself, and the router's count is the point.
    const unary = createTallyClient({ address: tc.cluster.routerAddress, coalesce: false });
    await unary.increment('metered', 0).catch(() => undefined);
    unary.close();
    await tc.client.read('metered');
    await tc.client.read('metered', { consistency: 'cached' });
    const port = tc.routerMetricsPort;
    expect((await scrapeMetric(port, 'tally_increments_accepted_total')) - acceptedBefore).toBe(10);
    expect(await scrapeMetric(port, 'tally_increments_rejected_total', { reason: 'invalid_argument' })).toBeGreaterThanOrEqual(1);
    expect(await scrapeMetric(port, 'tally_read_latency_seconds_count', { consistency: 'exact' })).toBeGreaterThanOrEqual(1);
    expect(await scrapeMetric(port, 'tally_read_latency_seconds_count', { consistency: 'cached' })).toBeGreaterThanOrEqual(1);
    // 'metered' is the one counter this cluster holds; the gauge follows on a 1 s timer.
    await waitFor(
      async () => {
        const counters = await scrapeMetric(port, 'tally_directory_counters');
        if (counters !== 1) throw new Error(`it reads ${counters}`);
        return true;
      },
      { timeoutMs: 5_000, what: 'tally_directory_counters to read 1' },
    );
    // prom-client's default metrics under their stock names, for stock Node.js dashboards.
    expect(await scrapeMetric(port, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);

    const primary = tc.cluster.node(0, 'primary');
    expect(await scrapeMetric(primary.metricsPort, 'tally_log_commit_batch_rows_sum')).toBeGreaterThanOrEqual(10);
    expect(await scrapeMetric(primary.metricsPort, 'tally_log_fsync_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(await scrapeMetric(primary.metricsPort, 'tally_node_increments_applied_total')).toBeGreaterThanOrEqual(10);
    // In sync, the follower is fed from memory: what was just committed is never read back from the log.
    await waitFor(
      async () => (await scrapeMetric(primary.metricsPort, 'tally_replication_entries_shipped_total', { source: 'memory' })) >= 1,
      { timeoutMs: 10_000, what: 'entries shipped from memory' },
    );
  });

  it('metrics: promtool check metrics finds nothing on router and node scrapes; build info and calls by method and code on both', async () => {
    const found = spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' });
    if (found.status !== 0) throw new Error('promtool is not installed: it comes from the Debian package prometheus (.ci/run installs it)');
    // A read, a refused read and an admin call: every RPC is counted, not only increments.
    await tc.client.increment('rpc:counted', 1);
    await tc.client.read('rpc:counted');
    await tc.client.read('').catch(() => undefined);
    await tc.client.describe('rpc:counted');
    const router = tc.routerMetricsPort;
    const primary = tc.cluster.node(0, 'primary').metricsPort;
    for (const port of [router, primary]) {
      const text = await metricsText(port);
      const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
      // prom-client's own three gauges named _total are kept under their stock names (stock dashboards query them); nothing of ours.
      const findings = `${check.stdout}${check.stderr}`
        .trim()
        .split('\n')
        .filter((line) => line !== '' && !/^nodejs_active_(handles|requests|resources)_total non-counter metrics/.test(line));
      expect(findings, `promtool check metrics on port ${port}`).toEqual([]);
      expect(text).toMatch(/^tally_build_info\{.*version="\d+\.\d+\.\d+".*\} 1$/m);
      expect(text).not.toMatch(/^tally_(process|nodejs)_/m);
    }
    const rpc = (method: string, code: string, port = router) =>
      scrapeMetric(port, 'tally_rpc_total', { service: method.split('/')[0]!, method: method.split('/')[1]!, code });
    expect(await rpc('counter.v1.CounterService/Read', 'OK')).toBeGreaterThanOrEqual(1);
    expect(await rpc('counter.v1.CounterService/Read', 'INVALID_ARGUMENT')).toBeGreaterThanOrEqual(1);
    expect(await rpc('counter.v1.AdminService/Describe', 'OK')).toBeGreaterThanOrEqual(1);
    // The router's writes reach the node as frames on its ApplyStream (or as unary Apply calls with --node-streams off).
    const applied = async (): Promise<number> => {
      const frames = (await metricsText(primary)).match(
        /^tally_node_stream_frames_total\{[^}]*method="ApplyStream"[^}]*code="OK"[^}]*\} (\d+)/m,
      );
      const calls = await rpc('tally.shard.v1.ShardNode/Apply', 'OK', primary).catch(() => 0);
      return calls + Number(frames?.[1] ?? 0);
    };
    expect(await applied()).toBeGreaterThanOrEqual(1);
  });

  it('router: CACHED reads of counters nobody wrote are answered 0 but never cached, so they cannot push out the ones in use', async () => {
    const port = tc.routerMetricsPort;
    await tc.client.increment('cache:known', 3);
    const neverWritten = Array.from({ length: 1_000 }, (_, index) => `cache:nobody:${index}`);
    const reads = await tc.client.readMany(neverWritten, { consistency: 'cached' });
    expect(reads.every((read) => read.total === 0n && read.shards === 0)).toBe(true);
    expect((await tc.client.read('cache:known', { consistency: 'cached' })).total).toBe(3n);
    // Wait for two whole refreshes after the reads: the gauge is set by each.
    const refreshes = await scrapeMetric(port, 'tally_cache_refresh_seconds_count');
    await waitFor(async () => (await scrapeMetric(port, 'tally_cache_refresh_seconds_count')) >= refreshes + 2, {
      timeoutMs: 15_000,
      what: 'two cache refreshes',
    });
    const entries = await scrapeMetric(port, 'tally_cache_entries');
    expect(entries).toBeGreaterThanOrEqual(1);
    expect(entries).toBeLessThan(50);
  });
});
