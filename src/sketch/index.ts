// The public surface of the sketch module: distinct counts by HyperLogLog.
// Re-exports only; nothing here but what callers may rely on.
export {
  HllSketch,
  hllPrecisionBits,
  hllRankMax,
  hllRegisterCount,
  hllStandardError,
  loadMemberHasher,
  packRegisterChanges,
  unpackRegisterChanges,
} from './hll.ts';
export type { MemberHasher, RegisterChange } from './hll.ts';
