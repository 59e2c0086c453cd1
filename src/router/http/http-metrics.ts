// What the HTTP port counts. Calls land in the gRPC port's per-method series
// (tally_rpc_total by service, method and code; the handlers' latency
// histograms), so a dashboard sees one API; this adds how they came.
import { Counter, type Registry } from 'prom-client';

export interface HttpMetrics {
  /** tally_rpc_total: the call's path and the status (gRPC numbering) it was answered with. */
  rpcStatus(methodPath: string, code: number): void;
  /** tally_router_calls_refused_total by reason, shared with the gRPC port. */
  callsRefused: Counter<'reason'>;
  httpCalls: Counter<'protocol'>;
}

export function createHttpMetrics(
  registry: Registry,
  shared: { rpcStatus: HttpMetrics['rpcStatus']; callsRefused: HttpMetrics['callsRefused'] },
): HttpMetrics {
  const httpCalls = new Counter({
    name: 'tally_http_calls_total',
    help: "Calls on the HTTP port by protocol (connect_json, connect_proto, grpc_web, other); their statuses are in tally_rpc_total with the gRPC port's",
    labelNames: ['protocol'],
    registers: [registry],
  });
  for (const protocol of ['connect_json', 'connect_proto', 'grpc_web']) httpCalls.inc({ protocol }, 0);
  return { ...shared, httpCalls };
}
