// Reconcile: each shard's total as memory holds it beside the total the log
// gives (the checkpoint plus the entries after it), and the log's total at an
// earlier lsn when it is not folded yet, so an operator can see drift. It only
// reads: a fixed view of the log, opened in the same turn memory is read.
import assert from 'node:assert/strict';
import type { shardV1 } from '../../common/index.ts';
import { EntryKind, type LogView } from '../log/index.ts';
import { parseShardId } from '../write/index.ts';
import type { NodeContext } from './node-context.ts';

/** The log's totals at its end and at compareAtLsn, read from one view. */
interface LogTotals {
  checkpointLsn: bigint;
  compareAvailable: boolean;
  fromLog: Map<number, bigint>;
  atCompare: Map<number, bigint>;
}

export function createReconcileHandler(
  context: NodeContext,
): (request: shardV1.ReconcileRequest__Output) => Promise<shardV1.ReconcileResponse__Output> {
  const { log, state } = context;
  const { totals } = context.memory;
  return async (request) => {
    context.requireWholeLog();
    const compareAtLsn = BigInt(request.compareAtLsn);
    const wanted = request.shardIds.length > 0 ? request.shardIds.map(parseShardId) : undefined;
    // Memory and a read view of the log are taken in the same turn, so
    // both stand at lastLsn; the view then stays fixed while writes and
    // checkpoint folds go on (a fold during the replay cannot fake drift).
    const lastLsn = log.lastLsn;
    const ids = wanted ?? totals.shardIds();
    const memory = new Map(ids.map((shardId) => [shardId, totals.get(shardId)]));
    const view = log.openView();
    let fromView: LogTotals;
    try {
      assert.equal(view.lastLsn, lastLsn, 'a log view opened in the same turn sees the same log end');
      fromView = await logTotals(view, lastLsn, compareAtLsn, wanted);
    } finally {
      view.close();
    }
    const { checkpointLsn, compareAvailable, fromLog, atCompare } = fromView;
    const allIds = wanted ?? [...new Set([...memory.keys(), ...fromLog.keys()])];
    return {
      lastLsn: lastLsn.toString(),
      role: state.role.role,
      epoch: state.role.epoch.toString(),
      checkpointLsn: checkpointLsn.toString(),
      compareAvailable,
      shards: allIds.map((shardId) => ({
        shardId: String(shardId),
        memoryTotal: (memory.get(shardId) ?? 0n).toString(),
        logTotal: (fromLog.get(shardId) ?? 0n).toString(),
        logTotalAtCompareLsn: (atCompare.get(shardId) ?? 0n).toString(),
      })),
    };
  };
}

async function logTotals(view: LogView, lastLsn: bigint, compareAtLsn: bigint, wanted: number[] | undefined): Promise<LogTotals> {
  const checkpointLsn = view.checkpointLsn;
  const fromLog = new Map<number, bigint>();
  // The log's view: the checkpoint's totals plus the entries after it.
  for (const [shardId, total] of view.checkpointTotals(wanted)) fromLog.set(shardId, total);
  // The log at compareAtLsn is only known when that lsn is not folded yet.
  const compareAvailable = compareAtLsn >= checkpointLsn;
  const atCompare = new Map(compareAvailable ? fromLog : []);
  await view.replaySliced(
    (lsn, shardId, amount, kind) => {
      // A drop or a clear leaves the shard as if never written, in the log's view as in memory.
      if (kind === EntryKind.drop || kind === EntryKind.clear) {
        fromLog.set(shardId, 0n);
        if (lsn <= compareAtLsn) atCompare.set(shardId, 0n);
        return;
      }
      fromLog.set(shardId, (fromLog.get(shardId) ?? 0n) + amount);
      if (lsn <= compareAtLsn) atCompare.set(shardId, (atCompare.get(shardId) ?? 0n) + amount);
    },
    lastLsn,
    wanted,
  );
  return { checkpointLsn, compareAvailable, fromLog, atCompare };
}
