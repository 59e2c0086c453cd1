// Sizing: the heat table of recent write rates, the policy that turns heat
// into a shard count, and the autoscaler that grows hot counters.
export { Autoscaler, shardRatesOf } from './autoscaler.ts';
export { HeatTracker, skewOf } from './heat.ts';
export { SizingPolicy, defaultSizing } from './sizing-policy.ts';
