// A prom-client registry per process and the HTTP endpoint that serves it,
// and the metrics every process exports: build info, calls by method and
// code, free space on a data directory.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { status } from '@grpc/grpc-js';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { shardProtocol } from '../wire/internal/index.ts';

/** This release's version: package.json two folders up, from src/common and from dist/common alike. */
function releaseVersion(): string {
  try {
    const manifest = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../package.json');
    const { version } = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { version?: unknown };
    return typeof version === 'string' ? version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * A registry with the process's default labels, prom-client's default process
 * metrics under their stock names (process_*, nodejs_*: what stock Node.js
 * dashboards query) and tally_build_info.
 */
export function createMetricsRegistry(labels: Record<string, string>): Registry {
  const registry = new Registry();
  registry.setDefaultLabels(labels);
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: 'tally_build_info',
    help: 'Always 1; the labels say which release runs: version (package.json), nodejs_version, shard_protocol (the internal wire version it speaks)',
    labelNames: ['version', 'nodejs_version', 'shard_protocol'],
    registers: [registry],
  }).set({ version: releaseVersion(), nodejs_version: process.version, shard_protocol: String(shardProtocol.current) }, 1);
  return registry;
}

/** Distinct method paths tally_rpc_total labels by name; calls to any further path count under method "other" (paths come from callers). */
const rpcPathsMax = 200;

const statusNameByCode = new Map<number, string>(
  Object.entries(status)
    .filter(([, code]) => typeof code === 'number')
    .map(([name, code]) => [code as number, name]),
);

/**
 * tally_rpc_total{service, method, code}: every call the server answered (or
 * that ended without an answer: CANCELLED), by its gRPC status name. Returns
 * what CallGuards.onStatus calls; label children are cached per path and code.
 */
export function registerRpcCounter(registry: Registry): (methodPath: string, code: number) => void {
  const calls = new Counter({
    name: 'tally_rpc_total',
    help: 'Calls served, by service, method and gRPC status code (OK included): reads, writes and admin calls alike',
    labelNames: ['service', 'method', 'code'],
    registers: [registry],
  });
  // Per path, the child of each status code (0..16): no key string built per call.
  const children = new Map<string, (Counter.Internal | undefined)[]>();
  const childOf = (methodPath: string, code: number): Counter.Internal => {
    let service = 'other';
    let method = 'other';
    if (children.has(methodPath) || children.size < rpcPathsMax) {
      const slash = methodPath.lastIndexOf('/');
      service = methodPath.slice(1, Math.max(1, slash));
      method = methodPath.slice(slash + 1);
    }
    return calls.labels({ service, method, code: statusNameByCode.get(code) ?? String(code) });
  };
  return (methodPath, code) => {
    let byCode = children.get(methodPath);
    // Bounded: past rpcPathsMax paths, a call's child is looked up by its labels ("other") each time.
    if (byCode === undefined && children.size < rpcPathsMax) children.set(methodPath, (byCode = []));
    let child = byCode?.[code];
    if (child === undefined) {
      child = childOf(methodPath, code);
      if (byCode !== undefined) byCode[code] = child;
    }
    child.inc();
  };
}

/**
 * tally_data_dir_free_bytes: the bytes an unprivileged writer may still use
 * on dataDir's filesystem (statfs: bavail x bsize), read at every scrape.
 * At 0 every write there fails RESOURCE_EXHAUSTED.
 */
export function registerDataDirFreeBytes(registry: Registry, dataDir: string): Gauge {
  return new Gauge({
    name: 'tally_data_dir_free_bytes',
    help: "Free space on the data directory's filesystem; at 0 writes there fail RESOURCE_EXHAUSTED",
    registers: [registry],
    collect() {
      try {
        const disk = fs.statfsSync(dataDir);
        this.set(disk.bavail * disk.bsize);
      } catch {
        // The last value stands (a gauge cannot be left out, and 0 would read as a full disk); the next scrape tries again.
      }
    },
  });
}

/** Serves GET /metrics; resolves with the bound port once listening. */
export async function startMetricsServer(
  registry: Registry,
  host: string,
  port: number,
): Promise<{ port: number; close: () => Promise<void> }> {
  const server = http.createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404).end('not found\n');
      return;
    }
    registry
      .metrics()
      .then((body) => response.writeHead(200, { 'content-type': registry.contentType }).end(body))
      .catch((error: unknown) => response.writeHead(500).end(String(error)));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  return {
    port: boundPort,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Latency buckets in seconds, from 50 µs to 5 s. */
export const latencyBucketsSeconds = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
export const batchSizeBuckets = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000];
