// The counter lifecycle beyond writes and reads: clear and delete (and the
// drops and clears owed to nodes), TTL expiry, configuration, listing,
// reconciliation of the two sides of a pair, and cluster status.
export { configureCounter } from './configure.ts';
export { CounterExpiry, ttlInForce } from './expiry.ts';
export { CounterLifecycle } from './lifecycle.ts';
export { listCounters } from './list.ts';
export { reconcile } from './reconcile.ts';
export { clusterStatus, pairStatusOf, type RouterView } from './status.ts';
