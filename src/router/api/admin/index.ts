// AdminService: its wiring and per-counter handlers (admin-service.ts), the
// cluster's handlers (pair-handlers.ts: status, reconcile, pair changes) and
// the backup streams (backup-handlers.ts). Only api/index.ts re-exports from here.
export { createAdminService, type AdminServiceDeps } from './admin-service.ts';
export { createPairHandlers, type PairDeps } from './pair-handlers.ts';
export { createBackupHandlers } from './backup-handlers.ts';
