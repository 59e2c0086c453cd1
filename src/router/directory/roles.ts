// What each part of the router takes of the directory: the few members it
// uses, so a test's fake implements only those and a reader can see at a
// glance what a part may change. Both stores implement all of Directory.
import type { Directory } from './contract.ts';

/** Exact reads: the counter, its pairs, and the barrier that makes memory trustworthy for them. */
export type ExactReadDirectory = Pick<Directory, 'get' | 'pair' | 'readBarrier' | 'removedCount'>;
/** Cached reads. */
export type CounterLookup = Pick<Directory, 'get'>;
/** Increments: counters resolved (created on first use) and their pairs. */
export type IncrementDirectory = Pick<Directory, 'resolveSlots' | 'counterColumns' | 'pair'>;
/** Distinct and membership paths: they write and read one counter at a time. */
export type KindPathDirectory = Pick<Directory, 'get' | 'getOrCreate' | 'pair' | 'readBarrier' | 'removedCount'>;
/** Configure: a counter's own settings. */
export type CounterSettingsDirectory = Pick<Directory, 'get' | 'getOrCreate' | 'setWindow' | 'setTtl' | 'setAutoscale'>;
/** TTL expiry: walks every counter. */
export type ExpiryDirectory = Pick<Directory, 'get' | 'liveCounters'>;
/** Listing: pages of names from the store. */
export type ListingDirectory = Pick<Directory, 'scan'>;
/** Clear and delete, and the drops and clears owed to nodes. */
export type LifecycleDirectory = Pick<
  Directory,
  | 'get'
  | 'pair'
  | 'clearCounter'
  | 'deleteCounters'
  | 'deleteUpTo'
  | 'pruneTombstones'
  | 'completeShardTasks'
  | 'shardTask'
  | 'shardTasksForRound'
  | 'pendingShardTaskCounts'
>;
/** Growth driven by heat. */
export type SizingDirectory = Pick<Directory, 'get' | 'setShards'>;
/** The pair supervisor: roles, epochs, sync state. */
export type SupervisedDirectory = Pick<Directory, 'allPairs' | 'pairOf' | 'updatePair'>;
/** Reconciling the two sides of a pair. */
export type ReconcileDirectory = Pick<Directory, 'get' | 'pair' | 'allPairs'>;
/** Cluster status. */
export type StatusDirectory = Pick<Directory, 'allPairs' | 'counterCount' | 'shardCountOfPair' | 'zoneWarning'>;
