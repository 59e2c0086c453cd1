// A resumable etcd watch over one key range, for the etcd directory: every
// event from a start revision on, in revision order, across reconnects. It
// must not skip a revision: it resumes from the last event it delivered,
// never from a response header (a catch-up response's header runs ahead of
// the events still to come, and etcd3's own Watcher resumes from it).
import assert from 'node:assert';
import type { Etcd3, IDuplexStream, IEvent, IWatchRequest, IWatchResponse } from 'etcd3';

export interface PrefixWatchHandlers {
  /** Events of whole revisions, oldest first; called synchronously from the stream. */
  events(events: readonly IEvent[]): void;
  /** etcd accepted the watch (again): events follow from where the last delivered ones ended. */
  connected(): void;
  /** The stream broke; the watch reconnects by itself, with backoff. */
  disconnected(error: Error): void;
  /**
   * The revision to resume from was compacted away: the watch stops, and
   * the owner reads everything again and calls restartFrom.
   */
  compacted(compactRevision: number): void;
}

export interface PrefixWatchOptions {
  key: Buffer;
  rangeEnd: Buffer;
  startRevision: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
}

type WatchStream = IDuplexStream<IWatchRequest, IWatchResponse>;

export class PrefixWatch {
  private stream: WatchStream | undefined;
  private nextRevision: number;
  private closed = false;
  /** After a compaction, until restartFrom. */
  private stopped = false;
  private backoffMs: number;
  private reconnectTimer: NodeJS.Timeout | undefined;
  /** Events of a response etcd split into fragments, until its last fragment. */
  private fragments: IEvent[] = [];
  private isConnected = false;
  /** Responses held back by holdDelivery (a test seam), oldest first; undefined when not holding. */
  private held: Array<{ stream: WatchStream; response: IWatchResponse }> | undefined;

  constructor(
    private readonly client: Etcd3,
    private readonly options: PrefixWatchOptions,
    private readonly handlers: PrefixWatchHandlers,
  ) {
    this.nextRevision = options.startRevision;
    this.backoffMs = options.reconnectMinMs;
  }

  /** True from etcd's acceptance of the watch until the stream breaks. */
  get connected(): boolean {
    return this.isConnected;
  }

  start(): void {
    void this.connect();
  }

  /** Watches again from `revision` (after a compaction and a reload). */
  restartFrom(revision: number): void {
    this.nextRevision = revision;
    this.stopped = false;
    this.dropStream();
    void this.connect();
  }

  /**
   * Drops the stream and opens a new one at once, resuming after the last
   * event delivered: for a stream that says it is connected but has stopped
   * delivering (a connection to one member dropped silently, with no error).
   */
  reopen(): void {
    // Held by the seam: it models a member that is behind, which a new stream to it would not cure.
    if (this.closed || this.stopped || this.stream === undefined || this.held !== undefined) return;
    this.dropStream();
    if (this.reconnectTimer !== undefined) clearTimeout(this.reconnectTimer);
    void this.connect();
  }

  /**
   * A test seam: holds back every response etcd sends (events, acceptance,
   * cancellation) until the returned function is called, then delivers
   * them in order, as a watch lagging behind etcd would: the stream stays
   * up (the lease keeps renewing) while memory falls behind.
   */
  holdDelivery(): () => void {
    assert(this.held === undefined, 'the watch is already held');
    const held: Array<{ stream: WatchStream; response: IWatchResponse }> = [];
    this.held = held;
    return () => {
      if (this.held !== held) return;
      this.held = undefined;
      for (const { stream, response } of held) this.receive(stream, response);
    };
  }

  close(): void {
    this.closed = true;
    if (this.reconnectTimer !== undefined) clearTimeout(this.reconnectTimer);
    this.dropStream();
  }

  private async connect(): Promise<void> {
    this.reconnectTimer = undefined;
    if (this.closed || this.stopped) return;
    let stream: WatchStream;
    try {
      stream = await this.client.watchClient.watch();
    } catch (error) {
      this.lost(undefined, error as Error);
      return;
    }
    if (this.closed || this.stopped || this.stream !== undefined) {
      stream.cancel();
      return;
    }
    this.stream = stream;
    this.fragments = [];
    stream.on('data', (response) => this.receive(stream, response));
    stream.on('error', (error) => this.lost(stream, error));
    stream.on('end', () => this.lost(stream, new Error('the etcd watch stream ended')));
    stream.write({
      create_request: {
        key: this.options.key,
        range_end: this.options.rangeEnd,
        start_revision: String(this.nextRevision),
        // Large responses arrive in fragments rather than past the gRPC message limit.
        fragment: true,
      },
    });
  }

  private receive(stream: WatchStream, response: IWatchResponse): void {
    if (stream !== this.stream) return;
    if (this.held !== undefined) {
      this.held.push({ stream, response });
      return;
    }
    if (response.canceled) {
      this.cancelled(stream, response);
      return;
    }
    if (response.created) {
      this.isConnected = true;
      this.backoffMs = this.options.reconnectMinMs;
      this.handlers.connected();
      return;
    }
    for (const event of response.events) this.fragments.push(event);
    if (response.fragment) return;
    const events = this.fragments;
    this.fragments = [];
    // No events: a progress notification, which says nothing we rely on.
    if (events.length === 0) return;
    this.nextRevision = Number(events[events.length - 1]!.kv.mod_revision) + 1;
    this.handlers.events(events);
  }

  private cancelled(stream: WatchStream, response: IWatchResponse): void {
    const compactRevision = Number(response.compact_revision);
    if (compactRevision > 0) {
      this.dropStream();
      this.stopped = true;
      this.handlers.compacted(compactRevision);
      return;
    }
    this.lost(stream, new Error(`etcd cancelled the watch: ${response.cancel_reason || 'no reason given'}`));
  }

  /** The stream (or the attempt to open one, stream undefined) failed: reconnect after a backoff. */
  private lost(stream: WatchStream | undefined, error: Error): void {
    // A late event of a stream already dropped.
    if (stream !== undefined && stream !== this.stream) return;
    this.dropStream();
    if (this.closed || this.stopped) return;
    this.handlers.disconnected(error);
    if (this.reconnectTimer !== undefined) return;
    const delayMs = this.backoffMs * (0.5 + Math.random() / 2);
    this.backoffMs = Math.min(this.backoffMs * 2, this.options.reconnectMaxMs);
    this.reconnectTimer = setTimeout(() => void this.connect(), delayMs);
  }

  private dropStream(): void {
    const stream = this.stream;
    this.stream = undefined;
    this.isConnected = false;
    this.fragments = [];
    // Cancelling emits a CANCELLED error, which lost() ignores: the stream is no longer ours.
    stream?.cancel();
  }
}
