// The checks both directory stores make before a change, so they refuse the
// same things with the same status and words.
import { ErrorCode, TallyError, shardsPerCounterMax } from '../common/index.ts';
import type { CounterInfo } from './directory.ts';

/**
 * setShards' input against the counter as held (`heldShardCount`: every
 * shard, announced ones too): NOT_FOUND, INVALID_ARGUMENT for a count out
 * of range, FAILED_PRECONDITION for a membership counter's partitions or a
 * shrink. Returns the counter.
 */
export function checkShardCountChange(name: string, counter: CounterInfo | undefined, shardCount: number): CounterInfo {
  if (counter === undefined) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
  if (!Number.isInteger(shardCount) || shardCount < 1)
    throw new TallyError(ErrorCode.invalidArgument, `shard count must be at least 1, got ${shardCount}`);
  if (shardCount > shardsPerCounterMax)
    throw new TallyError(ErrorCode.invalidArgument, `shard count ${shardCount} exceeds the limit of ${shardsPerCounterMax}`);
  const heldShardCount = counter.shards.length;
  if (counter.kind === 'membership' && shardCount !== heldShardCount)
    throw new TallyError(
      ErrorCode.failedPrecondition,
      `${name} is a membership counter: its ${heldShardCount} partitions are fixed at creation`,
    );
  if (shardCount < heldShardCount)
    throw new TallyError(ErrorCode.failedPrecondition, `shrinking ${name} from ${heldShardCount} to ${shardCount} shards is not supported`);
  return counter;
}
