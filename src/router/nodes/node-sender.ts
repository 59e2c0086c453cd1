// Coalescing sender for one node: increments bound for a node while a call to
// it is in flight wait and leave together in the next call, so a crowd of
// callers costs a few node calls, not one each. Each caller's group is
// acknowledged on its own once the node has committed it.
import { status, connectivityState, type ServiceError } from '@grpc/grpc-js';
import { ErrorCode, TallyError, deadlineIn, errorCodeOfGrpcStatus, withoutCallerStack, ErrorReason } from '../../wire/index.ts';
import {
  Fifo,
  busyRetryDelayMs,
  applyItemsPerCallMax,
  nodeCallBytesMax,
  nodeCallsInFlightMax,
  nodeQueueItemsMax,
  type shardV1,
} from '../../common/index.ts';
import { shardProtocolStamp } from '../../wire/internal/index.ts';
import { StreamUnsupportedError, type FrameStream, type FrameStreamObserver } from './frame-stream.ts';

/** An item the router sends: ids and amounts as numbers where exact, other fields only where its op needs them. */
export type ApplyItem = shardV1.ApplyItem & Required<Pick<shardV1.ApplyItem, 'shardId' | 'amount' | 'idempotencyKey'>>;

/**
 * One caller's atomic group as it goes on the wire: packed increments (at
 * most one record per shard, see increment-path.ts) and items for the rest.
 */
export interface OutgoingGroup {
  items: ApplyItem[];
  increments: shardV1.PackedIncrements[];
  /** Packed records plus items: what the node counts against applyItemsPerCallMax. */
  itemCount: number;
  /** The callers' increments (and other ops) the group carries: what metrics count. */
  incrementCount: number;
  /** An upper estimate of the encoded size. */
  sizeBytes: number;
}

interface Waiting {
  group: OutgoingGroup;
  resolve: (result: shardV1.GroupResult__Output) => void;
  reject: (error: TallyError) => void;
}

/**
 * A node call that certainly applied nothing: it was never sent (the channel
 * was already failing) or the node refused it before committing (stale
 * epoch). Unkeyed increments may safely go to another shard.
 */
export class NotAppliedError extends TallyError {
  constructor(code: ErrorCode, message: string) {
    super(code, message, undefined, { reason: ErrorReason.notApplied });
  }
}

export interface SenderObserver extends FrameStreamObserver {
  onCall(items: number, groups: number): void;
  /** A node could not be reached: its pair is worth a look now (failover need not wait for the next tick). */
  onUnreachable?(address: string): void;
}

/** The node's ApplyStream (frame-stream.ts). */
export type ApplyStream = FrameStream<shardV1.ApplyRequest, shardV1.ApplyResponse__Output>;

export class NodeSender {
  /** Bounded by nodeQueueItemsMax items; a caller's group waits here until a call has room. */
  private readonly queue = new Fifo<Waiting>();
  private queuedItems = 0;
  private inFlight = 0;

  constructor(
    readonly address: string,
    private readonly rpc: shardV1.ShardNodeClient,
    private readonly callTimeoutMs: number,
    private readonly epoch: () => bigint,
    private readonly observer: SenderObserver,
    /** Frames on the node's stream; undefined: one unary Apply per call. */
    private readonly applyStream?: ApplyStream,
  ) {}

  /** Sends one atomic group of items; resolves with the node's verdict for it. */
  send(items: ApplyItem[]): Promise<shardV1.GroupResult__Output> {
    return this.sendGroup({
      items,
      increments: [],
      itemCount: items.length,
      incrementCount: items.length,
      sizeBytes: itemsWireBytes(items),
    });
  }

  /** Sends one atomic group; resolves with the node's verdict for it (applied: one per item, none for packed increments). */
  sendGroup(group: OutgoingGroup): Promise<shardV1.GroupResult__Output> {
    if (this.queuedItems + group.itemCount > nodeQueueItemsMax) {
      return Promise.reject(
        new TallyError(
          ErrorCode.resourceExhausted,
          `node ${this.address} has ${this.queuedItems} increments queued; try again`,
          undefined,
          {
            reason: ErrorReason.notApplied,
            retryAfterMs: busyRetryDelayMs,
          },
        ),
      );
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ group, resolve, reject });
      this.queuedItems += group.itemCount;
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < nodeCallsInFlightMax && this.queue.length > 0) {
      const batch: Waiting[] = [];
      let itemCount = 0;
      let incrementCount = 0;
      let sizeBytes = 0;
      while (this.queue.length > 0) {
        const next = this.queue.peek()!.group;
        if (batch.length > 0 && (itemCount + next.itemCount > applyItemsPerCallMax || sizeBytes + next.sizeBytes > nodeCallBytesMax)) break;
        batch.push(this.queue.shift()!);
        itemCount += next.itemCount;
        incrementCount += next.incrementCount;
        sizeBytes += next.sizeBytes;
      }
      this.queuedItems -= itemCount;
      this.call(batch, incrementCount, sizeBytes);
    }
  }

  private call(batch: Waiting[], incrementCount: number, sizeBytes: number): void {
    if (this.rpc.getChannel().getConnectivityState(false) === connectivityState.TRANSIENT_FAILURE) {
      const failure = new NotAppliedError(ErrorCode.unavailable, `node ${this.address} is unreachable`);
      for (const waiting of batch) waiting.reject(failure);
      this.observer.onUnreachable?.(this.address);
      return;
    }
    this.inFlight++;
    this.observer.onCall(incrementCount, batch.length);
    const groups: shardV1.ApplyGroup[] = new Array(batch.length);
    for (let index = 0; index < batch.length; index++) groups[index] = batch[index]!.group;
    const request: shardV1.ApplyRequest = { protocol: shardProtocolStamp, epoch: this.epoch().toString(), groups };
    const stream = this.applyStream;
    if (stream === undefined || stream.unsupported) {
      this.callUnary(batch, request);
      return;
    }
    stream.send(request, sizeBytes, this.callTimeoutMs).then(
      (response) => this.settle(batch, null, response),
      (error: ServiceError | TallyError) => {
        // A node without streams refused the stream before reading a frame: nothing applied, so the call goes unary.
        if (error instanceof StreamUnsupportedError) this.callUnary(batch, request);
        else this.settle(batch, error);
      },
    );
  }

  private callUnary(batch: Waiting[], request: shardV1.ApplyRequest): void {
    // Without grpc-js's caller stack: nodeCallError reads only the code and details (caller-stack.ts).
    withoutCallerStack(() =>
      this.rpc.Apply(
        request,
        { deadline: deadlineIn(this.callTimeoutMs) },
        (error: ServiceError | null, response?: shardV1.ApplyResponse__Output) => this.settle(batch, error, response),
      ),
    );
  }

  /** One call's end, unary or a frame: each group resolved with its result, or all rejected alike. */
  private settle(batch: Waiting[], error: ServiceError | TallyError | null, response?: shardV1.ApplyResponse__Output): void {
    this.inFlight--;
    if (error instanceof TallyError) {
      for (const waiting of batch) waiting.reject(error);
    } else if (error || response === undefined || response.results.length !== batch.length) {
      const failure = nodeCallError(this.address, error);
      for (const waiting of batch) waiting.reject(failure);
      if (error?.code === status.UNAVAILABLE) this.observer.onUnreachable?.(this.address);
    } else {
      batch.forEach((waiting, index) => waiting.resolve(response.results[index]!));
    }
    this.pump();
  }
}

// Statuses a node gives when it refused the call outright (nothing applied).
const refusalStatuses = new Set<number>([status.RESOURCE_EXHAUSTED, status.INVALID_ARGUMENT, status.OUT_OF_RANGE]);

/** A failed node call: the increments' outcome is unknown unless the node refused it. */
export function nodeCallError(address: string, error: ServiceError | null): TallyError {
  if (error === null) return new TallyError(ErrorCode.internal, `node ${address} sent a malformed response`);
  if (error.code === status.FAILED_PRECONDITION)
    return new NotAppliedError(ErrorCode.unavailable, `node ${address} refused: ${error.details}`);
  if (refusalStatuses.has(error.code))
    return new TallyError(errorCodeOfGrpcStatus(error.code), `node ${address}: ${error.details}`, undefined, {
      reason: ErrorReason.notApplied,
    });
  if (error.code === status.DEADLINE_EXCEEDED)
    return new TallyError(ErrorCode.unavailable, `node ${address} did not answer in time`, undefined, {
      reason: ErrorReason.outcomeUnknown,
    });
  // grpc-js found no connection to send on: the call never left this process.
  if (error.code === status.UNAVAILABLE && error.details.startsWith('No connection established'))
    return new NotAppliedError(ErrorCode.unavailable, `node ${address} is unreachable: ${error.details}`);
  return new TallyError(ErrorCode.unavailable, `node ${address} is unavailable: ${error.details || error.message}`, undefined, {
    reason: ErrorReason.outcomeUnknown,
  });
}

/** An upper estimate of items' encoded size: items with sketch registers are large. */
export function itemsWireBytes(items: readonly ApplyItem[]): number {
  let sizeBytes = 0;
  for (const item of items) sizeBytes += 48 + item.idempotencyKey.length + (item.registers?.length ?? 0);
  return sizeBytes;
}
