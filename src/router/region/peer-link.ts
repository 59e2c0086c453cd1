// The outgoing link to one peer region: a RegionLink/Exchange stream to one
// of its routers, shipping this region's changed components in batches,
// one batch in flight. A component stays pending until the peer says it is
// durable; a stream that dies is opened again (the next address, backing
// off) and resumes from the version the peer says it holds.
import { Metadata, credentials, status, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import {
  RegionLinkClient,
  checkServerRole,
  regionAnswerTimeoutMs,
  regionBatchComponentsMax,
  regionReconnectMaxMs,
  regionReconnectMinMs,
  type Logger,
  type PeerRegion,
  type TlsMaterial,
  type counterV1,
  type regionV1,
} from '../../common/index.ts';
import { clientChannelOptions, monotonicNowMs } from '../../wire/index.ts';
import { compareVersions, maxVersion, zeroVersion, type ComponentVersion, type RegionComponent } from '../../wire/internal/index.ts';
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

function wireOfVersion(version: ComponentVersion): regionV1.ComponentVersion {
  return { term: version.term.toString(), round: version.round.toString() };
}

/** Bytes a component takes on the wire, for the bytes metric (close enough: name plus fixed fields). */
export function componentWireBytes(counter: string, component: RegionComponent): number {
  return Buffer.byteLength(counter) + component.origin.length + 40;
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
  /** Counters whose newest component the peer has not yet said is durable. */
  private readonly pending = new Set<string>();
  /** Every component up to this version has been offered to pending (a round is offered whole), and when that round began. */
  private offeredThrough: ComponentVersion = zeroVersion;
  private offeredAsOfUnixMs = 0;
  /** The watermark last sent on this stream: a round with no change is still sent once, to say the peer's parts are current. */
  private sentWatermark: ComponentVersion = zeroVersion;
  /** The peer holds every component up to this version (as it said on this tenure's streams). */
  private durable: ComponentVersion = zeroVersion;
  private inFlight: { seq: bigint; sent: Map<string, ComponentVersion>; sentMs: number } | undefined;
  /** Fails a stream whose peer holds a batch unanswered past regionAnswerTimeoutMs (a stuck peer on a live connection). */
  private watchdog: NodeJS.Timeout | undefined;
  private nextSeq = 1n;
  private lastAnswerMs = 0;

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
      if (this.inFlight !== undefined && monotonicNowMs() - this.inFlight.sentMs > regionAnswerTimeoutMs)
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
    for (const counter of changed) this.pending.add(counter);
    this.offeredThrough = maxVersion(this.offeredThrough, version);
    this.offeredAsOfUnixMs = asOfUnixMs;
    this.metrics.componentsPending.set({ peer: this.peerName }, this.pending.size);
    this.pump();
  }

  status(): counterV1.PeerRegionStatus__Output {
    return {
      region: this.peerName,
      link: this.state,
      address: this.state === 'up' ? this.currentAddress() : '',
      componentsPending: String(this.pending.size),
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
    this.inFlight = undefined;
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
    if (answer.seq === '0') {
      // The hello's answer: everything newer than what the peer holds is pending again.
      for (const [counter, component] of this.table.entries())
        if (compareVersions(component.version, this.durable) > 0) this.pending.add(counter);
      this.backoffMs = regionReconnectMinMs;
      this.setState('up', '');
    } else if (this.inFlight !== undefined && BigInt(answer.seq) === this.inFlight.seq) {
      for (const [counter, version] of this.inFlight.sent) {
        const newest = this.table.get(counter);
        if (newest === undefined || compareVersions(newest.version, version) <= 0) this.pending.delete(counter);
      }
      this.inFlight = undefined;
    }
    this.metrics.componentsPending.set({ peer: this.peerName }, this.pending.size);
    this.pump();
  }

  /** Sends the next batch: pending counters oldest version first, so the batch's version is a true watermark. */
  private pump(): void {
    if (this.state !== 'up' || this.inFlight !== undefined || this.call === undefined) return;
    if (this.pending.size === 0) {
      if (compareVersions(this.offeredThrough, this.sentWatermark) > 0) this.send([], this.offeredThrough, this.offeredAsOfUnixMs);
      return;
    }
    const ordered = [...this.pending]
      .map((counter) => ({ counter, component: this.table.get(counter) }))
      .filter((entry): entry is { counter: string; component: RegionComponent } => entry.component !== undefined)
      .sort((a, b) => compareVersions(a.component.version, b.component.version));
    if (ordered.length === 0) {
      this.pending.clear();
      this.pump();
      return;
    }
    const batch = ordered.slice(0, regionBatchComponentsMax);
    // Every pending component up to the watermark is in this batch: all of them when it holds every
    // pending one; otherwise everything older than the first left out.
    const next = ordered[batch.length]?.component.version;
    const watermark =
      next === undefined
        ? this.offeredThrough
        : next.round > 0n
          ? { term: next.term, round: next.round - 1n }
          : { term: next.term, round: 0n };
    this.send(batch, watermark, next === undefined ? this.offeredAsOfUnixMs : 0);
  }

  private send(batch: readonly { counter: string; component: RegionComponent }[], watermark: ComponentVersion, asOfUnixMs: number): void {
    const seq = this.nextSeq++;
    this.inFlight = { seq, sent: new Map(batch.map(({ counter, component }) => [counter, component.version])), sentMs: monotonicNowMs() };
    this.sentWatermark = watermark;
    let bytes = 0;
    const components = batch.map(({ counter, component }) => {
      bytes += componentWireBytes(counter, component);
      return {
        counter,
        total: component.total.toString(),
        version: wireOfVersion(component.version),
        asOfUnixMs: String(component.asOfUnixMs),
        generation: String(component.generation),
      };
    });
    this.metrics.bytes.inc({ peer: this.peerName, direction: 'sent' }, bytes);
    this.call!.write({ batch: { seq: seq.toString(), components, version: wireOfVersion(watermark), asOfUnixMs: String(asOfUnixMs) } });
  }

  private failed(error: Partial<ServiceError>): void {
    const refused =
      error.code === status.FAILED_PRECONDITION || error.code === status.UNAUTHENTICATED || error.code === status.PERMISSION_DENIED;
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
    this.inFlight = undefined;
    call?.cancel();
    this.client?.close();
    this.client = undefined;
  }
}
