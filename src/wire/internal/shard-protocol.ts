// The version of the internal wire (proto/shard.proto) this build speaks, and
// the one rule both ends apply to it: a router and a node (or two nodes) one
// release apart either understand each other or refuse with a status naming
// both versions. Pure: no gRPC here.
import type * as shardV1 from '../../generated/tally-shard-v1.ts';

/**
 * current: rises with every change to shard.proto a peer must know about
 * (history in ProtocolVersion's comment there). oldest: the oldest peer this
 * build still serves and understands; raised only when support for an older
 * peer is dropped, which is what makes a change breaking.
 */
export const shardProtocol: Readonly<{ current: number; oldest: number }> = Object.freeze({ current: 6, oldest: 1 });

/**
 * The first protocol whose nodes hold packed component entries (log kind 8):
 * a primary logs one only while its follower has said it speaks this.
 */
export const packedComponentsProtocol = 6;

/** What a request carries (every request's field 100). */
export const shardProtocolStamp: shardV1.ProtocolVersion = { current: shardProtocol.current, oldest: shardProtocol.oldest };

/** A peer's version as a message carries it; absent (null, undefined or zeros): a peer from before versions, 1..1. */
export function peerProtocolOf(
  wire: { current?: number; oldest?: number } | null | undefined,
): Readonly<{ current: number; oldest: number }> {
  const current = wire?.current ?? 0;
  if (current === 0) return { current: 1, oldest: 1 };
  const oldest = wire?.oldest ?? 0;
  return { current, oldest: oldest === 0 || oldest > current ? current : oldest };
}

/**
 * Why `peer` and this build cannot talk, or undefined when they can: the
 * ranges [oldest, current] must overlap. `peerName` says who the peer is in
 * the message ("the router or primary sending this", "node 10.0.0.5:50061").
 */
export function shardProtocolRefusal(
  peer: Readonly<{ current: number; oldest: number }>,
  peerName: string,
  mine: Readonly<{ current: number; oldest: number }> = shardProtocol,
): string | undefined {
  if (peer.oldest <= mine.current && peer.current >= mine.oldest) return undefined;
  const newer = peer.oldest > mine.current;
  return (
    `tally.shard protocol mismatch: ${peerName} speaks version ${peer.current} (oldest it accepts ${peer.oldest}), ` +
    `this process speaks ${mine.current} (oldest ${mine.oldest}); ${
      newer
        ? 'the peer is more than one release newer: upgrade this process first'
        : 'the peer is too old for this release: upgrade it first'
    } (docs/kubernetes.md, Upgrade)`
  );
}
