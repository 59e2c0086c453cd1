// The client's routers: one channel to each, and one attempt of a call,
// which moves past routers it cannot reach before sending anything. It never
// sends a call twice: whether a failed call goes again is resend-rule.ts's
// decision, taken by the caller.
import {
  connectivityState,
  status,
  type CallOptions,
  type ChannelInterface,
  type ChannelCredentials,
  type ChannelOptions,
  type Client,
  type Metadata,
  type requestCallback,
} from '@grpc/grpc-js';
import {
  withoutCallerStack,
  deadlineIn,
  monotonicNowMs,
  ErrorCode,
  TallyError,
  fromServiceError,
  ErrorReason,
  routerConnectWaitMsMax,
} from '../../wire/index.ts';
import { AdminServiceClient, CounterServiceClient, serviceConfig, type counterV1 } from '../counter-proto.ts';
import {
  IncrementStreamSender,
  ReadStreamSender,
  ReadStreamUnsupported,
  StreamUnsupported,
  type CoalescedItem,
  type IncrementStreamCall,
  type ReadPageRequest,
  type ReadStreamCall,
} from '../streams/index.ts';
import type { LeanReadManyResponse } from '../../wire/index.ts';
import { resendAfter, type CallClass } from './resend-rule.ts';
import { RouterRotation } from './router-rotation.ts';
import { connectionFailure } from './connection-failure.ts';
import type { CallAuth } from './call-auth.ts';
import { channelOptionsOf } from './channel-defaults.ts';

/** One router: its address and the two service clients on its one channel. */
export interface Router {
  address: string;
  counter: counterV1.CounterServiceClient;
  admin: counterV1.AdminServiceClient;
  channel: ChannelInterface;
}

/** The generated unary method as called: it returns the call, to cancel. */
type UnaryCall<Request, Response> = (
  this: Client,
  request: Request,
  metadata: Metadata,
  options: CallOptions,
  callback: requestCallback<Response>,
) => { cancel(): void };

type Unary<Request, Response> = {
  (request: Request, options: CallOptions, callback: requestCallback<Response>): void;
  // Last: Function.prototype.call sees the last overload.
  (request: Request, metadata: Metadata, options: CallOptions, callback: requestCallback<Response>): void;
};

/**
 * A method of CounterService or AdminService, taken from the generated
 * client's prototype: the same function serves every router's client, bound
 * to the one an attempt chooses.
 */
export interface Rpc<Request, Response> {
  service: 'counter' | 'admin';
  method: Unary<Request, Response>;
}

/**
 * The service config every router's channel gets: the load balancing of
 * proto/service-config.json (round-robin over every address a name resolves
 * to, e.g. a headless Service). Its retry policies are not given to grpc-js:
 * this client retries by the same rules itself (resend-rule.ts, tested
 * equal), and moves to another router as well.
 */
const serviceConfigJson = JSON.stringify({ loadBalancingConfig: serviceConfig.loadBalancingConfig });

/** The generated clients' methods, to name in an Rpc. */
export const counterMethods = CounterServiceClient.prototype as counterV1.CounterServiceClient;
export const adminMethods = AdminServiceClient.prototype as counterV1.AdminServiceClient;

export class RouterSet {
  readonly routers: Router[];
  private readonly rotation: RouterRotation;
  /** Per router: its IncrementStream, or undefined once it answered UNIMPLEMENTED. */
  private readonly streamSenders: (IncrementStreamSender | undefined)[];
  /** Per router: its ReadStream, or undefined once it answered UNIMPLEMENTED. */
  private readonly readSenders: (ReadStreamSender | undefined)[];
  private closed = false;

  constructor(
    addresses: readonly string[],
    channelCredentials: ChannelCredentials,
    private readonly auth: CallAuth,
    callerChannelOptions?: ChannelOptions,
  ) {
    const channelOptions = channelOptionsOf(callerChannelOptions, serviceConfigJson);
    this.routers = addresses.map((address) => {
      const counter = new CounterServiceClient(address, channelCredentials, channelOptions);
      // Share the channel: the admin client rides on the counter client's connection.
      const admin = new AdminServiceClient(address, channelCredentials, {
        ...channelOptions,
        channelOverride: counter.getChannel(),
      });
      return { address, counter, admin, channel: counter.getChannel() };
    });
    this.rotation = new RouterRotation(this.routers.length);
    this.streamSenders = this.routers.map(
      (router) =>
        new IncrementStreamSender(
          (streamDeadline) =>
            withoutCallerStack(() =>
              router.counter.IncrementStream(this.auth.current, { deadline: deadlineIn(streamDeadline - monotonicNowMs()) }),
            ) as unknown as IncrementStreamCall,
        ),
    );
    this.readSenders = this.routers.map(
      (router) =>
        new ReadStreamSender(
          (streamDeadline) =>
            withoutCallerStack(() =>
              router.counter.ReadStream(this.auth.current, { deadline: deadlineIn(streamDeadline - monotonicNowMs()) }),
            ) as unknown as ReadStreamCall,
        ),
    );
  }

  /** Whether some router is not in `tried`. */
  untried(tried: ReadonlySet<number>): boolean {
    return tried.size < this.routers.length;
  }

  /**
   * One attempt of a call: the routers in rotation order, leaving out those
   * in `tried` (to which it adds each router it tries). A router whose
   * channel is not READY within routerConnectWaitMsMax is passed over with
   * nothing sent, the one case every call may move (resend-rule). The last
   * router left gets the call whatever its state, so grpc-js waits for its
   * connection or fails fast, with its own reason, as with one address.
   */
  async attempt<Request, Response>(
    callClass: CallClass,
    rpc: Rpc<Request, Response>,
    request: Request,
    deadline: number,
    tried: Set<number>,
    signal?: AbortSignal,
  ): Promise<Response> {
    return this.attemptWith(callClass, deadline, tried, signal, (router, _index, metadata) =>
      this.send(router, rpc, request, deadline, signal, metadata),
    );
  }

  /**
   * One attempt of an IncrementBatch, as attempt() chooses its router, sent
   * as a batch of that router's IncrementStream; to a router that does not
   * serve IncrementStream (UNIMPLEMENTED: it read nothing), as the unary
   * IncrementBatch from then on.
   */
  async attemptStreamBatch(
    callClass: CallClass,
    items: CoalescedItem[],
    deadline: number,
    tried: Set<number>,
  ): Promise<counterV1.IncrementBatchResponse__Output> {
    return this.attemptWith(callClass, deadline, tried, undefined, async (router, index, metadata) => {
      const sender = this.streamSenders[index];
      if (sender !== undefined)
        try {
          return { results: await sender.send(items, deadline) };
        } catch (error) {
          if (!(error instanceof StreamUnsupported)) throw error;
          sender.close();
          this.streamSenders[index] = undefined;
        }
      return this.send(router, { service: 'counter', method: counterMethods.IncrementBatch }, { items }, deadline, undefined, metadata);
    });
  }

  /**
   * One attempt of a ReadMany, as attempt() chooses its router, sent as a
   * page of that router's ReadStream; to a router that does not serve
   * ReadStream (UNIMPLEMENTED: it read nothing), as the unary ReadMany from
   * then on.
   */
  async attemptStreamRead(
    page: ReadPageRequest,
    deadline: number,
    tried: Set<number>,
    signal?: AbortSignal,
  ): Promise<LeanReadManyResponse> {
    return this.attemptWith('read', deadline, tried, signal, async (router, index, metadata) => {
      const sender = this.readSenders[index];
      if (sender !== undefined)
        try {
          return { values: await sender.send(page, deadline) };
        } catch (error) {
          if (!(error instanceof ReadStreamUnsupported)) throw error;
          sender.close();
          this.readSenders[index] = undefined;
        }
      const readMany = { service: 'counter', method: counterMethods.ReadMany } as const;
      return (await this.send(router, readMany, page, deadline, signal, metadata)) as unknown as LeanReadManyResponse;
    });
  }

  private async attemptWith<Response>(
    callClass: CallClass,
    deadline: number,
    tried: Set<number>,
    signal: AbortSignal | undefined,
    send: (router: Router, index: number, metadata: Metadata) => Promise<Response>,
  ): Promise<Response> {
    // grpc-js would answer "Channel has been shut down" as INTERNAL: say what happened.
    if (this.closed) throw new TallyError(ErrorCode.failedPrecondition, 'the client is closed (close() was called): create a new one');
    throwIfAborted(signal);
    // The token for this attempt (a credentials callback is asked each time); a stream opened now carries it too.
    const metadata = this.auth.rotating ? await this.auth.next() : this.auth.current;
    const candidates = this.rotation.order().filter((index) => !tried.has(index));
    if (candidates.length === 0) throw new TallyError(ErrorCode.internal, 'no router left to try');
    const passedOver: string[] = [];
    for (const [position, index] of candidates.entries()) {
      const router = this.routers[index]!;
      tried.add(index);
      if (position < candidates.length - 1) {
        const notReady = await this.notReady(router.channel, Math.min(deadline, monotonicNowMs() + routerConnectWaitMsMax));
        if (notReady !== undefined && resendAfter(callClass, { sent: false, grpcCode: status.UNAVAILABLE }) === 'anotherRouter') {
          this.rotation.failed(index);
          passedOver.push(`${router.address}: ${notReady}`);
          continue;
        }
      }
      if (monotonicNowMs() >= deadline)
        throw new TallyError(ErrorCode.deadlineExceeded, `deadline exceeded before the call was sent${notSentTo(passedOver)}`, undefined, {
          reason: ErrorReason.notApplied,
        });
      try {
        throwIfAborted(signal);
        const response = await send(router, index, metadata);
        this.rotation.answered(index);
        return response;
      } catch (error) {
        if (signal?.aborted === true) throw aborted(signal);
        const received = fromServiceError(error);
        const failure = connectionFailure(router.address, received) ?? received;
        if (failure.code === ErrorCode.unavailable || failure.code === ErrorCode.deadlineExceeded) this.rotation.failed(index);
        else this.rotation.answered(index);
        if (passedOver.length === 0) throw failure;
        throw new TallyError(failure.code, `${failure.message}${notSentTo(passedOver)}`, failure.grpcCode, failure);
      }
    }
    throw new TallyError(ErrorCode.internal, 'unreachable: the last candidate is always sent to');
  }

  close(): void {
    this.closed = true;
    for (const sender of this.streamSenders) sender?.close();
    for (const sender of this.readSenders) sender?.close();
    for (const router of this.routers) {
      router.admin.close();
      router.counter.close();
    }
  }

  private send<Request, Response>(
    router: Router,
    rpc: Rpc<Request, Response>,
    request: Request,
    deadline: number,
    signal: AbortSignal | undefined,
    metadata: Metadata,
  ): Promise<Response> {
    const client: Client = rpc.service === 'counter' ? router.counter : router.admin;
    return new Promise((resolve, reject) => {
      const cancel = (): void => call.cancel();
      // gRPC takes a wall-clock deadline: converted at the last moment, so a clock step can only move this one call's.
      // Without grpc-js's caller stack: fromServiceError drops it (caller-stack.ts).
      const call = withoutCallerStack(() =>
        (rpc.method as unknown as UnaryCall<Request, Response>).call(
          client,
          request,
          metadata,
          { deadline: deadlineIn(deadline - monotonicNowMs()) },
          (error, response) => {
            signal?.removeEventListener('abort', cancel);
            if (error || response === undefined) reject(fromServiceError(error));
            else resolve(response);
          },
        ),
      );
      signal?.addEventListener('abort', cancel, { once: true });
    });
  }

  /** undefined once the channel is READY; else why it is not, by untilMs (monotonic; an IDLE channel is asked to connect). */
  private async notReady(channel: ChannelInterface, untilMs: number): Promise<string | undefined> {
    for (;;) {
      const state = channel.getConnectivityState(true);
      if (state === connectivityState.READY) return undefined;
      if (state === connectivityState.TRANSIENT_FAILURE) return 'no connection (refused, unreachable or failing TLS)';
      if (state === connectivityState.SHUTDOWN) return 'the client is closed';
      if (monotonicNowMs() >= untilMs) return 'not connected in time';
      await new Promise<void>((resolve) => channel.watchConnectivityState(state, deadlineIn(untilMs - monotonicNowMs()), () => resolve()));
    }
  }
}

/**
 * The error of a call its caller aborted: CANCELLED, whatever the signal's
 * reason. A write it interrupted may or may not have applied (a keyed one
 * may be sent again with its key).
 */
export function aborted(signal: AbortSignal): TallyError {
  const reason = signal.reason instanceof Error ? `: ${signal.reason.message}` : '';
  return new TallyError(ErrorCode.cancelled, `the call was aborted by its AbortSignal${reason}; a write may or may not have applied`);
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw aborted(signal);
}

function notSentTo(passedOver: readonly string[]): string {
  return passedOver.length === 0 ? '' : ` (not sent to ${passedOver.join('; ')})`;
}
