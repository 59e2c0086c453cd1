// A prom-client registry per process and the HTTP endpoint that serves it,
// and the gauges every process with a data directory exports.
import fs from 'node:fs';
import http from 'node:http';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';

export function createMetricsRegistry(labels: Record<string, string>): Registry {
  const registry = new Registry();
  registry.setDefaultLabels(labels);
  collectDefaultMetrics({ register: registry, prefix: 'tally_' });
  return registry;
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
