// A prom-client registry per process and the HTTP endpoint that serves it.
import http from 'node:http';
import { Registry, collectDefaultMetrics } from 'prom-client';

export function createMetricsRegistry(labels: Record<string, string>): Registry {
  const registry = new Registry();
  registry.setDefaultLabels(labels);
  collectDefaultMetrics({ register: registry, prefix: 'tally_' });
  return registry;
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
