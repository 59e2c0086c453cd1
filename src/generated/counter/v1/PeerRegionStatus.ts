// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

/**
 * One peer region as the answering router sees it (docs/regions.md).
 */
export interface PeerRegionStatus {
  'region'?: (string);
  /**
   * "up" (stream open and acknowledged), "connecting", "down", "refused"
   * (the peer named another region or rejected our credentials), or
   * "standby" (this router does not publish: another one supervises).
   */
  'link'?: (string);
  /**
   * The peer router the outgoing stream is connected to ('' when none).
   */
  'address'?: (string);
  /**
   * This region's components changed but not yet acknowledged by the peer.
   */
  'componentsPending'?: (number | string | Long);
  /**
   * Seconds since the newest component from that peer was applied here (-1: none yet).
   */
  'lagSeconds'?: (number | string);
  /**
   * Why the link is not up ('' when it is).
   */
  'error'?: (string);
}

/**
 * One peer region as the answering router sees it (docs/regions.md).
 */
export interface PeerRegionStatus__Output {
  'region': (string);
  /**
   * "up" (stream open and acknowledged), "connecting", "down", "refused"
   * (the peer named another region or rejected our credentials), or
   * "standby" (this router does not publish: another one supervises).
   */
  'link': (string);
  /**
   * The peer router the outgoing stream is connected to ('' when none).
   */
  'address': (string);
  /**
   * This region's components changed but not yet acknowledged by the peer.
   */
  'componentsPending': (string);
  /**
   * Seconds since the newest component from that peer was applied here (-1: none yet).
   */
  'lagSeconds': (number);
  /**
   * Why the link is not up ('' when it is).
   */
  'error': (string);
}
