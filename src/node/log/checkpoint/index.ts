// The checkpoint the log folds into: shard totals packed in blocks of
// consecutive shard ids, and the fold round that gathers a slice of entries
// at a time in memory before one transaction writes it. Files of
// src/node/log reach inside; everything else imports src/node/log/index.ts.
export { FoldRound } from './fold-round.ts';
export { blockOf, blockShards, checkpointTotalsOf, decodeBlock, encodeBlock, mergeBlockBytes } from './checkpoint-blocks.ts';
