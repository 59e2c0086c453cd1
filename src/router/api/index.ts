// The router's two gRPC services (counters, admin), their input checks and
// the bearer-token check in front of them.
export { refusalOf, refusalOfAuthorization, tokensOf, type Tokens } from './auth.ts';
export { createAdminService, type AdminServiceDeps } from './admin/index.ts';
export { createCounterService, type CounterServiceDeps } from './counter/index.ts';
export { handler, type CallState, type UnaryHandler, type UnaryHandlers } from './handler.ts';
