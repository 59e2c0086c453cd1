// One gRPC channel and one coalescing sender per node address. The only place
// the router opens connections to nodes.
import {
  credentials,
  connectivityState,
  type CallOptions,
  type requestCallback,
  type ChannelCredentials,
  type ServiceError,
} from '@grpc/grpc-js';
import {
  ShardNodeClient,
  nodeCallsInFlightMax,
  nodeStreamBytesInFlightMax,
  nodeStreamFramesInFlightMax,
  nodeStreamQueuedFramesMax,
  type shardV1,
} from '../../common/index.ts';
import { TallyError, clientChannelOptions, deadlineIn } from '../../wire/index.ts';
import { shardProtocolStamp } from '../../wire/internal/index.ts';
import { NodeSender, nodeCallError, type ApplyStream, type SenderObserver } from './node-sender.ts';
import { FrameStream, StreamUnsupportedError, frameCallOf } from './frame-stream.ts';

export type NodeReadMethod = 'ReadSketches' | 'ReadWindows' | 'CheckMembers' | 'MemberCounts' | 'ReadComponents' | 'ChangedShards';

const streamChannelOptions = { ...clientChannelOptions, 'grpc.use_local_subchannel_pool': 1 };

type ReadShardsStream = FrameStream<shardV1.ReadShardsRequest, shardV1.ReadShardsResponse__Output>;

export interface NodeHandle {
  address: string;
  rpc: shardV1.ShardNodeClient;
  sender: NodeSender;
  /** undefined when the pool sends unary calls only. */
  applyStream: ApplyStream | undefined;
  readStream: ReadShardsStream | undefined;
  streamChannels: StreamChannel[];
}

/** The channel a node stream runs on: made on first use, replaced (the old one closed) when asked for a fresh one. */
class StreamChannel {
  private current: shardV1.ShardNodeClient | undefined;

  constructor(private readonly make: () => shardV1.ShardNodeClient) {}

  client(fresh: boolean): shardV1.ShardNodeClient {
    if (fresh && this.current !== undefined) {
      // Its calls were all abandoned: nothing of value is left on it.
      this.current.close();
      this.current = undefined;
    }
    this.current ??= this.make();
    return this.current;
  }

  close(): void {
    this.current?.close();
    this.current = undefined;
  }
}

export interface NodePoolOptions {
  /** Apply and ReadShards as frames on one long-lived stream per node (true), or one unary call each. */
  streams: boolean;
}

export class NodePool {
  private readonly nodes = new Map<string, NodeHandle>();

  constructor(
    private readonly callTimeoutMs: number,
    private readonly epochOf: (address: string) => bigint,
    private readonly observer: SenderObserver,
    /** Mutual TLS to the nodes when the cluster runs TLS. */
    private readonly channelCredentials: ChannelCredentials = credentials.createInsecure(),
    private readonly options: NodePoolOptions = { streams: true },
  ) {}

  get(address: string): NodeHandle {
    let handle = this.nodes.get(address);
    if (handle === undefined) {
      const rpc = new ShardNodeClient(address, this.channelCredentials, clientChannelOptions);
      const streams = this.options.streams;
      // Each stream on a channel and connection of its own (grpc-js shares connections between
      // channels unless told not to), replaced when a frame stalled (see FrameStream's open).
      const makeStreamClient = (): shardV1.ShardNodeClient => new ShardNodeClient(address, this.channelCredentials, streamChannelOptions);
      const applyChannel = new StreamChannel(makeStreamClient);
      const readChannel = new StreamChannel(makeStreamClient);
      // Apply frames are few and large (the sender coalesces behind nodeCallsInFlightMax); reads many and small.
      const applyStream: ApplyStream | undefined = streams
        ? new FrameStream(
            address,
            (handlers, fresh) => frameCallOf(applyChannel.client(fresh).ApplyStream(), handlers),
            {
              framesInFlightMax: nodeCallsInFlightMax,
              bytesInFlightMax: nodeStreamBytesInFlightMax,
              queuedFramesMax: nodeStreamQueuedFramesMax,
            },
            this.observer,
          )
        : undefined;
      const readStream: ReadShardsStream | undefined = streams
        ? new FrameStream(
            address,
            (handlers, fresh) => frameCallOf(readChannel.client(fresh).ReadShardsStream(), handlers),
            {
              framesInFlightMax: nodeStreamFramesInFlightMax,
              bytesInFlightMax: nodeStreamBytesInFlightMax,
              queuedFramesMax: nodeStreamQueuedFramesMax,
            },
            this.observer,
          )
        : undefined;
      const sender = new NodeSender(address, rpc, this.callTimeoutMs, () => this.epochOf(address), this.observer, applyStream);
      handle = { address, rpc, sender, applyStream, readStream, streamChannels: [applyChannel, readChannel] };
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
    const { rpc, readStream } = this.get(address);
    if (readStream !== undefined && !readStream.unsupported) {
      // Ids as numbers (exact below 2^53), as below; about 10 bytes each on the wire.
      const request = { protocol: shardProtocolStamp, shardIds: shardIds as number[], generations: generations as string[] };
      const sizeBytes = 16 + 10 * shardIds.length + 10 * generations.length;
      return readStream.send(request, sizeBytes, timeoutMs).then(
        (response) => {
          if (response.totals.length !== shardIds.length) throw nodeCallError(address, null);
          return response;
        },
        (error: unknown) => {
          // A node without streams: nothing was read, ask it unary.
          if (error instanceof StreamUnsupportedError) return this.readShards(address, shardIds, timeoutMs, generations);
          throw error instanceof TallyError ? error : nodeCallError(address, error as ServiceError);
        },
      );
    }
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
    for (const handle of this.nodes.values()) {
      handle.applyStream?.close();
      handle.readStream?.close();
      for (const channel of handle.streamChannels) channel.close();
      handle.rpc.close();
    }
    this.nodes.clear();
  }
}
