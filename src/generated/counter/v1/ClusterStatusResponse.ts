// Original file: proto/counter.proto

import type { NodeInfo as _counter_v1_NodeInfo, NodeInfo__Output as _counter_v1_NodeInfo__Output } from '../../counter/v1/NodeInfo.ts';
import type { PairStatus as _counter_v1_PairStatus, PairStatus__Output as _counter_v1_PairStatus__Output } from '../../counter/v1/PairStatus.ts';
import type { PeerRegionStatus as _counter_v1_PeerRegionStatus, PeerRegionStatus__Output as _counter_v1_PeerRegionStatus__Output } from '../../counter/v1/PeerRegionStatus.ts';
import type { Long } from '@grpc/proto-loader';

export interface ClusterStatusResponse {
  'nodes'?: (_counter_v1_NodeInfo)[];
  'counters'?: (number | string | Long);
  'pairs'?: (_counter_v1_PairStatus)[];
  /**
   * "sqlite" (one router, embedded) or "etcd" (several routers may share it).
   */
  'directoryStore'?: (string);
  /**
   * The routers sharing the directory now (their ids); this one alone for sqlite.
   */
  'routers'?: (string)[];
  /**
   * The router that supervises the pairs now ("" while none holds the lease).
   */
  'supervisor'?: (string);
  /**
   * The router that answered.
   */
  'router'?: (string);
  /**
   * The answering router's dedup window (--dedup-window-ms): how long a
   * retried idempotency key is recognised (G2). The outbox relay refuses a
   * longer window of its own (G12). 0 from a router too old to say.
   */
  'dedupWindowMs'?: (number | string | Long);
  /**
   * This cluster's region (--region); '' when it runs alone.
   */
  'region'?: (string);
  /**
   * Each peer region this router exchanges components with.
   */
  'peerRegions'?: (_counter_v1_PeerRegionStatus)[];
}

export interface ClusterStatusResponse__Output {
  'nodes': (_counter_v1_NodeInfo__Output)[];
  'counters': (string);
  'pairs': (_counter_v1_PairStatus__Output)[];
  /**
   * "sqlite" (one router, embedded) or "etcd" (several routers may share it).
   */
  'directoryStore': (string);
  /**
   * The routers sharing the directory now (their ids); this one alone for sqlite.
   */
  'routers': (string)[];
  /**
   * The router that supervises the pairs now ("" while none holds the lease).
   */
  'supervisor': (string);
  /**
   * The router that answered.
   */
  'router': (string);
  /**
   * The answering router's dedup window (--dedup-window-ms): how long a
   * retried idempotency key is recognised (G2). The outbox relay refuses a
   * longer window of its own (G12). 0 from a router too old to say.
   */
  'dedupWindowMs': (string);
  /**
   * This cluster's region (--region); '' when it runs alone.
   */
  'region': (string);
  /**
   * Each peer region this router exchanges components with.
   */
  'peerRegions': (_counter_v1_PeerRegionStatus__Output)[];
}
