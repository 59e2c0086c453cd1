// This region's side of publishing: the publisher's rounds (on the
// supervising router), where each round's totals come from (the nodes' feed
// of changed shards, exact reads, distinct counters' sketches), and the term
// that orders a tenure's versions. The links that ship what it publishes are
// in ../peer-link.ts; docs/regions.md has the design.
export { RegionPublisher, isPublishable, type PublisherDirectory, type PublisherReads } from './region-publisher.ts';
export { ShardFeed, type FeedDirectory, type FeedNodes, type FedTotal, type FeedRound } from './shard-feed.ts';
export { publishesSketch, readSketches, type SketchRead, type SketchReads } from './sketch-source.ts';
export { TombstoneSource, type TombstoneDirectory } from './tombstone-source.ts';
export { fileTermSource, revisionTermSource, type TermSource } from './publish-term.ts';
