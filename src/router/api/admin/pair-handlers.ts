// AdminService's cluster handlers: status, reconciliation, and the
// directory's pair changes (add, drain, replace a node). Each checks its
// input whole before the directory is asked; a pair change is logged at warn
// and its in-sync gauge reset, since the pair must catch up again.
import { ErrorCode, TallyError, validateCounterName, validateNodeAddress } from '../../../wire/index.ts';
import type { Logger, counterV1 } from '../../../common/index.ts';
import { clusterStatus, pairStatusOf, reconcile, type RouterView } from '../../counters/index.ts';
import type { Directory, PairInfo } from '../../directory/index.ts';
import type { RouterMetrics } from '../../metrics/index.ts';
import type { NodePool } from '../../nodes/index.ts';
import { handler } from '../handler.ts';

/** What the cluster handlers hand their calls to. */
export interface PairDeps {
  directory: Directory;
  pool: NodePool;
  metrics: RouterMetrics;
  logger: Logger;
  statusTimeoutMs: number;
  reconcileTimeoutMs: number;
  /** This router, the others sharing its directory, and the supervisor: for ClusterStatus. */
  routerView: RouterView;
  /** Called once a pair was added: the supervisor checks it at once. */
  onPairAdded(pair: PairInfo): void;
}

export function createPairHandlers(deps: PairDeps) {
  const { directory, pool, metrics, logger } = deps;
  return {
    ClusterStatus: handler<counterV1.ClusterStatusRequest__Output, counterV1.ClusterStatusResponse__Output>(() =>
      clusterStatus(directory, pool, deps.statusTimeoutMs, deps.routerView),
    ),

    AddPair: handler<counterV1.AddPairRequest__Output, counterV1.PairResponse__Output>(async (request) => {
      const primary = validateNodeAddress(request.primary, 'primary');
      const follower = validateNodeAddress(request.follower, 'follower');
      const pair = await directory.addPair({ primary, follower });
      metrics.pairInSync.set({ pair: String(pair.pairIndex) }, 0);
      logger.warn('pair added', { pair: pair.pairIndex, primary, follower });
      deps.onPairAdded(pair);
      return { pair: pairStatusOf(directory, pair) };
    }),

    DrainPair: handler<counterV1.DrainPairRequest__Output, counterV1.PairResponse__Output>(async (request) => {
      if (request.pair >= directory.allPairs().length) throw new TallyError(ErrorCode.notFound, `there is no pair ${request.pair}`);
      const pair = await directory.setPairDraining(request.pair, !request.undrain);
      logger.warn(pair.draining ? 'pair draining' : 'pair undrained', {
        pair: pair.pairIndex,
        shards: directory.shardCountOfPair(pair.pairIndex),
      });
      return { pair: pairStatusOf(directory, pair) };
    }),

    ReplaceNode: handler<counterV1.ReplaceNodeRequest__Output, counterV1.ReplaceNodeResponse__Output>(async (request) => {
      const address = validateNodeAddress(request.address, 'address');
      const newAddress = validateNodeAddress(request.newAddress, 'new_address');
      const pair = directory.pairOf(address);
      if (pair === undefined) throw new TallyError(ErrorCode.notFound, `no pair has a node at ${address}`);
      if (pair.primary === address) {
        throw new TallyError(
          ErrorCode.failedPrecondition,
          `${address} is the primary of pair ${pair.pairIndex}: only a follower slot can move (a lost primary is replaced by failover first)`,
        );
      }
      if (directory.pairOf(newAddress) !== undefined)
        throw new TallyError(ErrorCode.failedPrecondition, `${newAddress} is already a node of a pair`);
      // Directory first: from here on the old node is neither read, promoted
      // nor shipped to; the supervisor tells the primary its new follower.
      const next = await directory.updatePair(pair.pairIndex, { follower: newAddress, followerId: '', inSync: false, replaced: true });
      metrics.pairInSync.set({ pair: String(pair.pairIndex) }, 0);
      logger.warn('node replaced', {
        pair: pair.pairIndex,
        replaced: address,
        follower: newAddress,
        primary: next.primary,
        epoch: next.epoch,
      });
      return { pair: next.pairIndex, primary: next.primary, follower: next.follower, epoch: next.epoch.toString() };
    }),

    Reconcile: handler<counterV1.ReconcileRequest__Output, counterV1.ReconcileResponse__Output>(async (request, call) => {
      const counter = request.counter === '' ? undefined : validateCounterName(request.counter);
      const result = await reconcile(directory, pool, metrics, deps.reconcileTimeoutMs, counter, call);
      logger.info('reconcile', { counter: counter ?? '*', shardsChecked: result.shardsChecked, shardsDrifting: result.shardsDrifting });
      return result;
    }),
  };
}
