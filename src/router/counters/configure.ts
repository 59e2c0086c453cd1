// Configure: a counter's autoscale, a total's window, a membership counter's
// partitions, its time to live. Checks the whole request before anything
// changes, then changes only the directory (nodes learn a window with the
// next increment).
import { ErrorCode, TallyError, validateCounterName } from '../../wire/index.ts';
import { counterTtlMsMax, counterTtlMsMin, type Logger, type counterV1 } from '../../common/index.ts';
import { validateWindowConfig } from '../../window/index.ts';
import type { CounterInfo, CounterSettingsDirectory } from '../directory/index.ts';

/** Applies a Configure request; answers the counter as it now stands. */
export async function configureCounter(
  directory: CounterSettingsDirectory,
  logger: Logger,
  request: counterV1.ConfigureRequest__Output,
  /** See RouterDeps.ttlSupported. */
  ttlSupported = true,
): Promise<CounterInfo> {
  const name = validateCounterName(request.counter);
  // Everything is checked before anything changes.
  if (!['AUTOSCALE_UNCHANGED', 'AUTOSCALE_ON', 'AUTOSCALE_OFF'].includes(request.autoscale)) {
    throw new TallyError(ErrorCode.invalidArgument, `autoscale must be AUTOSCALE_ON or AUTOSCALE_OFF, got ${request.autoscale}`);
  }
  const window = request.window ?? undefined;
  const setting = window === undefined ? undefined : { bucketMs: Number(window.bucketMs), retentionMs: Number(window.retentionMs) };
  if (setting !== undefined) {
    const problem = validateWindowConfig(setting.bucketMs, setting.retentionMs);
    if (problem !== undefined) throw new TallyError(ErrorCode.invalidArgument, `window: ${problem}`);
  }
  const ttl = request.ttl === null || request.ttl === undefined ? undefined : validateTtl(request.ttl);
  if (ttl !== undefined && !ttlSupported)
    throw new TallyError(
      ErrorCode.failedPrecondition,
      'counter TTLs need the embedded directory (one router): with several routers on etcd no router sees every write, so none can tell a counter is idle',
    );
  const partitions = request.membershipPartitions ?? 0;
  if (partitions > 0 && setting !== undefined) throw new TallyError(ErrorCode.invalidArgument, 'a membership counter has no window');
  const existing = directory.get(name);
  if (request.autoscale === 'AUTOSCALE_ON' && (partitions > 0 || existing?.kind === 'membership')) {
    throw new TallyError(ErrorCode.failedPrecondition, `a membership counter's partitions are fixed: autoscale stays off`);
  }
  if (partitions > 0) {
    if (existing !== undefined && (existing.kind !== 'membership' || existing.shards.length !== partitions)) {
      const what =
        existing.kind === 'membership' ? `membership counter with ${existing.shards.length} partitions` : `${existing.kind} counter`;
      throw new TallyError(ErrorCode.failedPrecondition, `counter "${name}" already exists as a ${what}; partitions are fixed at creation`);
    }
    if (existing === undefined) {
      await directory.getOrCreate(name, 'membership', partitions);
      logger.info('configure', { counter: name, kind: 'membership', partitions });
    }
  }
  if (setting !== undefined) {
    if (existing !== undefined && existing.kind !== 'total')
      throw new TallyError(ErrorCode.failedPrecondition, `counter "${name}" is a ${existing.kind} counter: only totals have windows`);
    await directory.getOrCreate(name, 'total');
    await directory.setWindow(name, setting);
    logger.info('configure', { counter: name, windowBucketMs: setting.bucketMs, windowRetentionMs: setting.retentionMs });
  }
  const counter = directory.get(name);
  if (counter === undefined) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
  if (ttl !== undefined) {
    await directory.setTtl(counter.name, ttl);
    logger.info('configure', { counter: counter.name, ttlMs: ttl ?? 'default' });
  }
  // Checked above: anything but UNCHANGED is ON or OFF.
  if (request.autoscale !== 'AUTOSCALE_UNCHANGED') {
    const autoscale = request.autoscale === 'AUTOSCALE_ON';
    if (autoscale !== counter.autoscale) {
      await directory.setAutoscale(counter.name, autoscale);
      logger.info('configure', { counter: counter.name, autoscale });
    }
  }
  return counter;
}

/**
 * A TtlSetting as the directory stores it: milliseconds, 0 for never, null
 * for "the router default". INVALID_ARGUMENT outside the bounds.
 */
function validateTtl(ttl: counterV1.TtlSetting__Output): number | null {
  // uint64 arrives as a decimal string: compared as a bigint, never rounded.
  const ttlMs = BigInt(ttl.ttlMs);
  if (ttl.never) {
    if (ttlMs !== 0n) throw new TallyError(ErrorCode.invalidArgument, `ttl: never goes with ttl_ms 0, got ${ttlMs}`);
    return 0;
  }
  if (ttlMs === 0n) return null;
  if (ttlMs < BigInt(counterTtlMsMin) || ttlMs > BigInt(counterTtlMsMax))
    throw new TallyError(
      ErrorCode.invalidArgument,
      `ttl_ms must be ${counterTtlMsMin}..${counterTtlMsMax} (0: the router default), got ${ttlMs}`,
    );
  return Number(ttlMs);
}
