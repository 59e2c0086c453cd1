// Windowed totals: the public surface of src/window. Import from here, not
// from the files. Memory only; it never reads a clock or touches the log.
export {
  WindowBuckets,
  validateWindowConfig,
  windowBucketMsMin,
  windowBucketsMax,
  windowRange,
  windowRetentionMsMax,
} from './window-buckets.ts';
export type { WindowRange } from './window-buckets.ts';
