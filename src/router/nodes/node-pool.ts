// One gRPC channel and one coalescing sender per node address. The only place
// the router opens connections to nodes.
import { credentials, connectivityState, type CallOptions, type requestCallback, type ChannelCredentials } from '@grpc/grpc-js';
import { ShardNodeClient, clientChannelOptions, deadlineIn, shardProtocolStamp, type shardV1 } from '../../common/index.ts';
import { NodeSender, nodeCallError, type SenderObserver } from './node-sender.ts';

export type NodeReadMethod = 'ReadSketches' | 'ReadWindows' | 'CheckMembers' | 'MemberCounts';

export interface NodeHandle {
  address: string;
  rpc: shardV1.ShardNodeClient;
  sender: NodeSender;
}

export class NodePool {
  private readonly nodes = new Map<string, NodeHandle>();

  constructor(
    private readonly callTimeoutMs: number,
    private readonly epochOf: (address: string) => bigint,
    private readonly observer: SenderObserver,
    /** Mutual TLS to the nodes when the cluster runs TLS. */
    private readonly channelCredentials: ChannelCredentials = credentials.createInsecure(),
  ) {}

  get(address: string): NodeHandle {
    let handle = this.nodes.get(address);
    if (handle === undefined) {
      const rpc = new ShardNodeClient(address, this.channelCredentials, clientChannelOptions);
      const sender = new NodeSender(address, rpc, this.callTimeoutMs, () => this.epochOf(address), this.observer);
      handle = { address, rpc, sender };
      this.nodes.set(address, handle);
    }
    return handle;
  }

  /**
   * True when the channel is known to be failing, so a call would not even be
   * sent. Used to steer unkeyed increments to another shard without risk of
   * applying one twice.
   */
  isKnownDown(address: string): boolean {
    return this.get(address).rpc.getChannel().getConnectivityState(true) === connectivityState.TRANSIENT_FAILURE;
  }

  /** generations: parallel to shardIds, or empty when none of their counters was ever cleared. */
  readShards(
    address: string,
    shardIds: readonly number[],
    timeoutMs: number,
    generations: readonly string[] = [],
  ): Promise<shardV1.ReadShardsResponse__Output> {
    const { rpc } = this.get(address);
    return new Promise((resolve, reject) => {
      rpc.ReadShards(
        // Ids as numbers (exact below 2^53): the encoder then makes no decimal string to parse per shard.
        { protocol: shardProtocolStamp, shardIds: shardIds as number[], generations: generations as string[] },
        { deadline: deadlineIn(timeoutMs) },
        (error, response) => {
          if (error || response === undefined || response.totals.length !== shardIds.length) reject(nodeCallError(address, error ?? null));
          else resolve(response);
        },
      );
    });
  }

  status(address: string, timeoutMs: number): Promise<shardV1.StatusResponse__Output> {
    const { rpc } = this.get(address);
    return new Promise((resolve, reject) => {
      rpc.Status({ protocol: shardProtocolStamp }, { deadline: deadlineIn(timeoutMs) }, (error, response) => {
        if (error || response === undefined) reject(nodeCallError(address, error ?? null));
        else resolve(response);
      });
    });
  }

  setRole(address: string, request: shardV1.SetRoleRequest, timeoutMs: number): Promise<shardV1.StatusResponse__Output> {
    const { rpc } = this.get(address);
    return new Promise((resolve, reject) => {
      rpc.SetRole({ ...request, protocol: shardProtocolStamp }, { deadline: deadlineIn(timeoutMs) }, (error, response) => {
        if (error || response === undefined) reject(nodeCallError(address, error ?? null));
        else resolve(response);
      });
    });
  }

  reconcile(address: string, request: shardV1.ReconcileRequest, timeoutMs: number): Promise<shardV1.ReconcileResponse__Output> {
    const { rpc } = this.get(address);
    return new Promise((resolve, reject) => {
      rpc.Reconcile({ ...request, protocol: shardProtocolStamp }, { deadline: deadlineIn(timeoutMs) }, (error, response) => {
        if (error || response === undefined) reject(nodeCallError(address, error ?? null));
        else resolve(response);
      });
    });
  }

  /** A read-only ShardNode method by name (the kinds beyond totals). */
  read<Request, Response>(address: string, method: NodeReadMethod, request: Request, timeoutMs: number): Promise<Response> {
    const { rpc } = this.get(address);
    // The one cast left: TypeScript cannot pick one generated overload set by a union of method names.
    const invoke = (
      rpc as unknown as Record<NodeReadMethod, (request: Request, options: CallOptions, callback: requestCallback<Response>) => void>
    )[method];
    return new Promise((resolve, reject) => {
      invoke.call(rpc, { ...request, protocol: shardProtocolStamp }, { deadline: deadlineIn(timeoutMs) }, (error, response) => {
        if (error || response === undefined) reject(nodeCallError(address, error ?? null));
        else resolve(response);
      });
    });
  }

  close(): void {
    for (const handle of this.nodes.values()) handle.rpc.close();
    this.nodes.clear();
  }
}
