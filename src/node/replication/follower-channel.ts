// The primary's connection to its follower: one client of its own per peer
// address (no subchannel shared with another client in this process), so
// that abandoning it opens a new connection. It sends nothing itself.
import { credentials, type ChannelCredentials } from '@grpc/grpc-js';
import { ShardNodeClient, type shardV1 } from '../../common/index.ts';
import { clientChannelOptions } from '../../wire/index.ts';

export class FollowerChannel {
  private client: shardV1.ShardNodeClient | undefined;
  /** The peer address the client is for ('' before the first). */
  peer = '';
  /**
   * A snapshot chunk was sent on this client and no call on it has been
   * answered since: the chunk may still sit in the connection's send buffer,
   * and a chunk 0 delivered late would empty the follower, so this
   * connection is not abandoned for a new one (see Replicator.failed).
   * Appends are safe to deliver late: log matching.
   */
  holdsUnansweredChunk = false;

  constructor(private readonly channelCredentials: ChannelCredentials | undefined) {}

  /** The client for peer, opened when there is none or it is for another address. */
  to(peer: string): shardV1.ShardNodeClient {
    if (this.client === undefined || this.peer !== peer) {
      this.client?.close();
      this.client = new ShardNodeClient(peer, this.channelCredentials ?? credentials.createInsecure(), {
        ...clientChannelOptions,
        'grpc.use_local_subchannel_pool': 1,
      });
      this.peer = peer;
      this.holdsUnansweredChunk = false;
    }
    return this.client;
  }

  /** An answer on a connection: whatever was sent on it before has reached the follower (one stream of bytes, handled in order). */
  answeredOn(client: shardV1.ShardNodeClient): void {
    if (client === this.client) this.holdsUnansweredChunk = false;
  }

  /** Closes the client; the next call opens a new connection. */
  close(): void {
    this.client?.close();
    this.client = undefined;
  }
}
