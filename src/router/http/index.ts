// The router's HTTP port: counter.v1 over Connect and gRPC-Web.
export { startConnectPort, type ConnectPort, type ConnectPortOptions } from './connect-port.ts';
export { createHttpMetrics, type HttpMetrics } from './http-metrics.ts';
