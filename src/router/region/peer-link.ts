// The outgoing link to one peer region: a RegionLink/Exchange stream to one
// of its routers, shipping this region's changed components in batches,
// several in flight. A component stays pending until the peer says it is
// durable, and a counter changed again meanwhile ships once, at its newest
// version; a stream that dies is opened again (the next address, backing
// off) and resumes from the version the peer says it holds.
import { Metadata, credentials, status, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import {
  RegionLinkClient,
  checkServerRole,
  regionAnswerTimeoutMs,
  regionBatchBytesMax,
  regionBatchComponentsMax,
  regionLinkBatchesInFlightMax,
  regionReconnectMaxMs,
  regionReconnectMinMs,
  type Logger,
  type PeerRegion,
  type TlsMaterial,
  type counterV1,
  type regionV1,
} from '../../common/index.ts';
import { clientChannelOptions, monotonicNowMs } from '../../wire/index.ts';
import {
  compareVersions,
  encodeBatchComponents,
  maxVersion,
  zeroVersion,
  type ComponentVersion,
  type CounterComponent,
  type RegionComponent,
} from '../../wire/internal/index.ts';
import type { RegionMetrics } from './region-metrics.ts';

export type LinkState = 'connecting' | 'up' | 'down' | 'refused';

/** What a link reads of the publisher: the newest component of each counter it has published. */
export interface PublishedTable {
  get(counter: string): RegionComponent | undefined;
  entries(): IterableIterator<[string, RegionComponent]>;
}

export interface PeerLinkSettings {
  ownRegion: string;
  peer: PeerRegion;
  tls: TlsMaterial | undefined;
  /** Presented as a bearer token: the peer's RegionLink needs its admin token. */
  adminToken: string | undefined;
}

/** Wire form of a version (uint64 as decimal strings). */
function versionOfWire(version: regionV1.ComponentVersion__Output | null | undefined): ComponentVersion {
  return version === null || version === undefined ? zeroVersion : { term: BigInt(version.term), round: BigInt(version.round) };
}

/** A 64-bit field for protobufjs: a number when it is exact as one (the encoder parses a decimal string digit by digit). */
function wireInteger(value: bigint): number | string {
  return value <= maxSafe && value >= -maxSafe ? Number(value) : value.toString();
}
const maxSafe = BigInt(Number.MAX_SAFE_INTEGER);

function wireOfVersion(version: ComponentVersion): regionV1.ComponentVersion {
  return { term: wireInteger(version.term), round: wireInteger(version.round) };
}

/** Bytes a component takes on the wire, for the bytes metric (close enough: name plus fixed fields). */
export function componentWireBytes(counter: string, component: RegionComponent): number {
  return Buffer.byteLength(counter) + component.origin.length + 40 + (component.sketch?.length ?? 0);
}

/** Whether a batch of `length` components and `bytes` is full before one of `nextBytes`: regionBatchComponentsMax, and regionBatchBytesMax once sketches ride along (at least one). */
export function batchIsFull(length: number, bytes: number, nextBytes: number): boolean {
  return length === regionBatchComponentsMax || (length > 0 && bytes + nextBytes > regionBatchBytesMax);
}

/** How many of `ordered` fit in one batch (batchIsFull). */
export function batchLength(ordered: readonly { counter: string; component: RegionComponent }[]): number {
  let bytes = 0;
  for (let length = 0; length < ordered.length; length++) {
    const next = componentWireBytes(ordered[length]!.counter, ordered[length]!.component);
    if (batchIsFull(length, bytes, next)) return length;
    bytes += next;
  }
  return ordered.length;
}

/**
 * A TLS handshake that failed over a certificate (another CA, another role):
 * its cause is configuration, as a wrong token's is, so the link says
 * `refused` rather than `down` and retries at the longest backoff.
 */
export function isCertificateRefusal(error: Partial<ServiceError>): boolean {
  if (error.code !== status.UNAVAILABLE) return false;
  return /certificate|CERT_|SSL routines|alert (bad|unknown|handshake)/i.test(`${error.details ?? error.message ?? ''}`);
}

export class PeerLink {
  private state: LinkState = 'down';
  private error = '';
  private addressIndex = 0;
  private backoffMs = regionReconnectMinMs;
  private client: InstanceType<typeof RegionLinkClient> | undefined;
  private call: ClientDuplexStream<regionV1.RegionFrame, regionV1.RegionAnswer__Output> | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private stopped = true;
  /**
   * Counters whose newest component is neither durable at the peer nor in a
   * batch in flight, to that component's version, oldest version first (a
   * counter offered again moves to the end), so a batch is the map's head:
   * no round sorts, and a pump never walks past what is already in flight.
   */
  private pending = new Map<string, ComponentVersion>();
  /** Counters in a batch in flight, to the version sent; offered again at a newer version, they are pending too. */
  private readonly sentVersions = new Map<string, ComponentVersion>();
  /** Every component up to this version has been offered to pending (a round is offered whole), and when that round began. */
  private offeredThrough: ComponentVersion = zeroVersion;
  private offeredAsOfUnixMs = 0;
  /** The watermark last sent on this stream: a round with no change is still sent once, to say the peer's parts are current. */
  private sentWatermark: ComponentVersion = zeroVersion;
  /** The peer holds every component up to this version (as it said on this tenure's streams). */
  private durable: ComponentVersion = zeroVersion;
  /** Batches sent and not yet answered, in seq order (the peer answers them in that order). */
  private readonly inFlight = new Map<bigint, { sent: Map<string, ComponentVersion>; sentMs: number }>();
  /** Fails a stream whose peer holds a batch unanswered past regionAnswerTimeoutMs (a stuck peer on a live connection). */
  private watchdog: NodeJS.Timeout | undefined;
  private nextSeq = 1n;
  private lastAnswerMs = 0;
  /** The peer's hello answer on this stream said it reads a batch's components as columns. */
  private peerReadsPacked = false;

  constructor(
    private readonly settings: PeerLinkSettings,
    private readonly table: PublishedTable,
    private readonly metrics: RegionMetrics,
    private readonly logger: Logger,
  ) {
    metrics.linkUp.set({ peer: settings.peer.name }, 0);
    metrics.componentsPending.set({ peer: settings.peer.name }, 0);
  }

  get peerName(): string {
    return this.settings.peer.name;
  }

  start(): void {
    this.stopped = false;
    clearInterval(this.watchdog);
    this.watchdog = setInterval(() => {
      const oldest = this.inFlight.values().next().value;
      if (oldest !== undefined && monotonicNowMs() - oldest.sentMs > regionAnswerTimeoutMs)
        this.failed({ code: status.DEADLINE_EXCEEDED, details: `no answer to a batch within ${regionAnswerTimeoutMs} ms` });
    }, 1_000);
    this.watchdog.unref();
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.watchdog);
    clearTimeout(this.reconnectTimer);
    this.closeStream();
    this.pending.clear();
    this.offeredThrough = zeroVersion;
    this.durable = zeroVersion;
    this.setState('down', '');
    this.metrics.componentsPending.set({ peer: this.peerName }, 0);
  }

  /** A round published these counters at `version`: they are pending until the peer holds them. */
  offer(changed: readonly string[], version: ComponentVersion, asOfUnixMs: number): void {
    for (const counter of changed) {
      this.pending.delete(counter);
      this.pending.set(counter, version);
    }
    this.offeredThrough = maxVersion(this.offeredThrough, version);
    this.offeredAsOfUnixMs = asOfUnixMs;
    this.pump();
    this.metrics.componentsPending.set({ peer: this.peerName }, this.unacknowledged());
  }

  /** Components not yet acknowledged by the peer: pending, and in flight (a counter offered again while in flight, until its newer one is sent, counts twice). */
  private unacknowledged(): number {
    return this.pending.size + this.sentVersions.size;
  }

  status(): counterV1.PeerRegionStatus__Output {
    return {
      region: this.peerName,
      link: this.state,
      address: this.state === 'up' ? this.currentAddress() : '',
      componentsPending: String(this.unacknowledged()),
      lagSeconds: -1,
      error: this.error,
    };
  }

  /** Milliseconds since the peer last answered (Infinity: never on this stream). */
  silentMs(): number {
    return this.lastAnswerMs === 0 ? Infinity : monotonicNowMs() - this.lastAnswerMs;
  }

  private currentAddress(): string {
    return this.settings.peer.addresses[this.addressIndex % this.settings.peer.addresses.length]!;
  }

  private setState(state: LinkState, error: string): void {
    if (state !== this.state)
      this.logger.info('region link', { peer: this.peerName, link: state, address: this.currentAddress(), ...(error ? { error } : {}) });
    this.state = state;
    this.error = error;
    this.metrics.linkUp.set({ peer: this.peerName }, state === 'up' ? 1 : 0);
  }

  private connect(): void {
    if (this.stopped) return;
    const address = this.currentAddress();
    this.setState('connecting', this.error);
    const channelCredentials =
      this.settings.tls === undefined
        ? credentials.createInsecure()
        : credentials.createSsl(this.settings.tls.ca, this.settings.tls.key, this.settings.tls.cert, {
            checkServerIdentity: checkServerRole('router'),
          });
    this.client?.close();
    this.client = new RegionLinkClient(address, channelCredentials, clientChannelOptions);
    const metadata = new Metadata();
    if (this.settings.adminToken !== undefined) metadata.set('authorization', `Bearer ${this.settings.adminToken}`);
    const call = this.client.Exchange(metadata);
    this.call = call;
    this.inFlight.clear();
    this.sentVersions.clear();
    this.peerReadsPacked = false;
    this.lastAnswerMs = 0;
    this.sentWatermark = zeroVersion;
    call.on('data', (answer: regionV1.RegionAnswer__Output) => {
      if (this.call === call) this.answered(answer);
    });
    call.on('error', (error: ServiceError) => {
      if (this.call === call) this.failed(error);
    });
    call.on('end', () => {
      if (this.call === call) this.failed({ code: status.UNAVAILABLE, details: 'the peer closed the stream' } as ServiceError);
    });
    call.write({ hello: { originRegion: this.settings.ownRegion, targetRegion: this.peerName } });
  }

  private answered(answer: regionV1.RegionAnswer__Output): void {
    this.lastAnswerMs = monotonicNowMs();
    if (answer.region !== this.peerName) {
      this.failed({
        code: status.FAILED_PRECONDITION,
        details: `${this.currentAddress()} serves region "${answer.region}", not ${this.peerName}`,
      } as ServiceError);
      return;
    }
    this.durable = maxVersion(this.durable, versionOfWire(answer.durable));
    const batch = answer.seq === '0' ? undefined : this.inFlight.get(BigInt(answer.seq));
    if (answer.seq === '0') {
      this.peerReadsPacked = answer.readsPackedComponents === true;
      // The hello's answer: everything newer than what the peer holds is pending again, oldest first.
      const again: [string, ComponentVersion][] = [];
      for (const [counter, component] of this.table.entries())
        if (compareVersions(component.version, this.durable) > 0) again.push([counter, component.version]);
      again.sort((a, b) => compareVersions(a[1], b[1]));
      this.pending = new Map(again);
      this.backoffMs = regionReconnectMinMs;
      this.setState('up', '');
    } else if (batch !== undefined) {
      this.inFlight.delete(BigInt(answer.seq));
      for (const [counter, version] of batch.sent) {
        const sent = this.sentVersions.get(counter);
        if (sent !== undefined && compareVersions(sent, version) === 0) this.sentVersions.delete(counter);
        // Offered again meanwhile at a newer version: it stays pending for that one.
        const waiting = this.pending.get(counter);
        if (waiting !== undefined && compareVersions(waiting, version) <= 0) this.pending.delete(counter);
      }
    }
    this.pump();
    this.metrics.componentsPending.set({ peer: this.peerName }, this.unacknowledged());
  }

  /** Sends batches while fewer than regionLinkBatchesInFlightMax are unanswered: pending counters not in flight, oldest version first. */
  private pump(): void {
    while (this.state === 'up' && this.call !== undefined && this.inFlight.size < regionLinkBatchesInFlightMax) {
      const batch: { counter: string; component: RegionComponent }[] = [];
      const gone: string[] = [];
      // Every pending component up to the watermark is in this batch or an earlier one of the stream: all
      // of them when nothing pending is left out; otherwise everything older than the first left out.
      let next: ComponentVersion | undefined;
      let batchBytes = 0;
      for (const [counter, version] of this.pending) {
        const sent = this.sentVersions.get(counter);
        if (sent !== undefined && compareVersions(sent, version) >= 0) {
          gone.push(counter);
          continue;
        }
        const component = this.table.get(counter);
        if (component === undefined) {
          gone.push(counter);
          continue;
        }
        // A batch is one gRPC message: bounded by count and by bytes (a dense sketch is 12 KiB).
        const bytes = componentWireBytes(counter, component);
        if (batchIsFull(batch.length, batchBytes, bytes)) {
          next = version;
          break;
        }
        batchBytes += bytes;
        batch.push({ counter, component });
      }
      for (const counter of gone) this.pending.delete(counter);
      // In flight now: out of pending until answered (a stream that fails is resumed from the peer's hello, which re-reads the table).
      for (const { counter } of batch) this.pending.delete(counter);
      if (batch.length === 0) {
        if (compareVersions(this.offeredThrough, this.sentWatermark) > 0) this.send([], this.offeredThrough, this.offeredAsOfUnixMs);
        return;
      }
      const watermark =
        next === undefined
          ? this.offeredThrough
          : next.round > 0n
            ? { term: next.term, round: next.round - 1n }
            : { term: next.term, round: 0n };
      this.send(batch, watermark, next === undefined ? this.offeredAsOfUnixMs : 0);
    }
  }

  private send(batch: readonly { counter: string; component: RegionComponent }[], watermark: ComponentVersion, asOfUnixMs: number): void {
    const seq = this.nextSeq++;
    this.inFlight.set(seq, {
      sent: new Map(batch.map(({ counter, component }) => [counter, component.version])),
      sentMs: monotonicNowMs(),
    });
    for (const { counter, component } of batch) this.sentVersions.set(counter, component.version);
    this.sentWatermark = maxVersion(this.sentWatermark, watermark);
    let bytes = 0;
    for (const { counter, component } of batch) bytes += componentWireBytes(counter, component);
    this.metrics.bytes.inc({ peer: this.peerName, direction: 'sent' }, bytes);
    this.call!.write({ batch: { seq: seq.toString(), ...this.wireComponents(batch), version: wireOfVersion(watermark), asOfUnixMs } });
  }

  /** A batch's components as the peer reads them: columns when its hello answer said so, else a message each. */
  private wireComponents(batch: readonly CounterComponent[]): Pick<regionV1.ComponentBatch, 'components' | 'packedComponents'> {
    if (batch.length === 0) return { components: [] };
    if (this.peerReadsPacked) return { packedComponents: encodeBatchComponents(batch) };
    return {
      components: batch.map(({ counter, component }) => ({
        counter,
        total: wireInteger(component.total),
        version: wireOfVersion(component.version),
        asOfUnixMs: component.asOfUnixMs,
        generation: component.generation,
        ...(component.sketch === undefined ? {} : { sketch: component.sketch }),
        ...(component.incarnation === undefined ? {} : { incarnation: String(component.incarnation) }),
        ...(component.tombstone === true ? { tombstone: true } : {}),
      })),
    };
  }

  private failed(error: Partial<ServiceError>): void {
    const refused =
      error.code === status.FAILED_PRECONDITION ||
      error.code === status.UNAUTHENTICATED ||
      error.code === status.PERMISSION_DENIED ||
      isCertificateRefusal(error);
    const wasUp = this.state === 'up';
    this.metrics.errors.inc({ peer: this.peerName, reason: refused ? 'refused' : wasUp ? 'stream' : 'connect' });
    this.closeStream();
    this.setState(refused ? 'refused' : 'down', `${error.details ?? error.message ?? 'stream failed'}`);
    if (this.stopped) return;
    // Another address of the peer next time; a refusal waits the longest (its cause is configuration).
    this.addressIndex++;
    const waitMs = refused ? regionReconnectMaxMs : this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, regionReconnectMaxMs);
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => this.connect(), waitMs);
    this.reconnectTimer.unref();
  }

  private closeStream(): void {
    const call = this.call;
    this.call = undefined;
    this.inFlight.clear();
    this.sentVersions.clear();
    this.peerReadsPacked = false;
    call?.cancel();
    this.client?.close();
    this.client = undefined;
  }
}
