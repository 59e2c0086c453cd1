// Configure: a counter's autoscale, a total's window, a membership counter's
// partitions. Checks the whole request before anything changes, then changes
// only the directory (nodes learn a window with the next increment).
import { ErrorCode, TallyError, validateCounterName, type Logger, type counterV1 } from '../common/index.ts';
import { validateWindowConfig } from '../window/index.ts';
import type { Directory, CounterInfo } from './directory.ts';

/** Applies a Configure request; answers the counter as it now stands. */
export function configureCounter(directory: Directory, logger: Logger, request: counterV1.ConfigureRequest__Output): CounterInfo {
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
      directory.getOrCreate(name, 'membership', partitions);
      logger.info('configure', { counter: name, kind: 'membership', partitions });
    }
  }
  if (setting !== undefined) {
    if (existing !== undefined && existing.kind !== 'total')
      throw new TallyError(ErrorCode.failedPrecondition, `counter "${name}" is a ${existing.kind} counter: only totals have windows`);
    directory.getOrCreate(name, 'total');
    directory.setWindow(name, setting);
    logger.info('configure', { counter: name, windowBucketMs: setting.bucketMs, windowRetentionMs: setting.retentionMs });
  }
  const counter = directory.get(name);
  if (counter === undefined) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
  // Checked above: anything but UNCHANGED is ON or OFF.
  if (request.autoscale !== 'AUTOSCALE_UNCHANGED') {
    const autoscale = request.autoscale === 'AUTOSCALE_ON';
    if (autoscale !== counter.autoscale) {
      directory.setAutoscale(counter.name, autoscale);
      logger.info('configure', { counter: counter.name, autoscale });
    }
  }
  return counter;
}
