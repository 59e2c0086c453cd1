// The router's two gRPC services (counters, admin), their input checks and
// the bearer-token check in front of them.
export { refusalOf, tokensOf } from './auth.ts';
export { createAdminService, createCounterService } from './router-service.ts';
