// The read paths: exact sums over every shard (primary, or follower while in
// sync), the cached read, and windowed reads.
export { overtakenCounters, readExact, readPairWithFallback, rereadOvertaken } from './exact-reader.ts';
export { ReadPath, type TotalRead } from './read-path.ts';
export { WindowReader } from './window-reader.ts';
