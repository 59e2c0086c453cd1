// The receiving side of RegionLink/Exchange: a peer region's publisher
// streams components; each batch is answered once every component in it is
// durable in this region's node logs (ComponentStore). What it checks: the
// hello names this region and a configured peer; every component is the
// peer's, well formed, for a counter that may hold one. It never merges:
// the node keeps the newest version, so a duplicate, reordered, replayed or
// late batch changes nothing it should not.
import type { ServerDuplexStream } from '@grpc/grpc-js';
import { ErrorCode, TallyError, monotonicNowMs, toServiceError } from '../../wire/index.ts';
import {
  componentProblem,
  compareVersions,
  maxVersion,
  zeroVersion,
  type ComponentVersion,
  type RegionComponent,
} from '../../wire/internal/index.ts';
import { regionBatchComponentsMax, type Logger, type regionV1 } from '../../common/index.ts';
import type { ComponentStore } from './component-store.ts';
import { componentWireBytes } from './peer-link.ts';
import type { RegionMetrics } from './region-metrics.ts';

type ExchangeCall = ServerDuplexStream<regionV1.RegionFrame__Output, regionV1.RegionAnswer>;

/** What this router last heard from one origin (in memory: a restart starts from zero, and the origin resends). */
export interface OriginProgress {
  /** Every component of the origin up to this version is durable here. */
  durable: ComponentVersion;
  /**
   * The newest whole round the origin confirmed: every component of the
   * origin up to `version` was its total at asOfUnixMs (the origin's clock).
   */
  fresh: { version: ComponentVersion; asOfUnixMs: number };
  /** Monotonic time of the last batch made durable (0: none). */
  lastBatchMs: number;
}

function versionOf(wire: regionV1.ComponentVersion__Output | null | undefined): ComponentVersion {
  if (wire === null || wire === undefined) return zeroVersion;
  return { term: BigInt(wire.term), round: BigInt(wire.round) };
}

export class RegionReceiver {
  readonly progress = new Map<string, OriginProgress>();

  constructor(
    private readonly region: string,
    private readonly peerNames: ReadonlySet<string>,
    private readonly store: ComponentStore,
    private readonly metrics: RegionMetrics,
    private readonly logger: Logger,
  ) {
    for (const peer of peerNames) metrics.lagSeconds.set({ peer }, -1);
  }

  /** Seconds since the last batch from `origin` was made durable here (-1: none yet). */
  lagSeconds(origin: string): number {
    const last = this.progress.get(origin)?.lastBatchMs ?? 0;
    return last === 0 ? -1 : (monotonicNowMs() - last) / 1_000;
  }

  refreshLagGauges(): void {
    for (const peer of this.peerNames) this.metrics.lagSeconds.set({ peer }, this.lagSeconds(peer));
  }

  /** The Exchange handler: frames are handled one at a time, in order. */
  exchange(call: ExchangeCall): void {
    let origin: string | undefined;
    let chain = Promise.resolve();
    let closed = false;
    const fail = (error: unknown): void => {
      if (closed) return;
      closed = true;
      if (origin !== undefined) this.metrics.errors.inc({ peer: origin, reason: 'apply' });
      call.emit('error', toServiceError(error));
    };
    call.on('data', (frame: regionV1.RegionFrame__Output) => {
      chain = chain
        .then(async () => {
          if (closed) return;
          if (origin === undefined) {
            origin = this.hello(frame);
            const progress = this.progress.get(origin);
            call.write({ seq: '0', durable: wire(progress?.durable ?? zeroVersion), region: this.region, refused: 0 });
            return;
          }
          if (frame.batch === null || frame.batch === undefined)
            throw new TallyError(ErrorCode.invalidArgument, 'after the hello every frame is a batch');
          const refused = await this.apply(origin, frame.batch);
          const progress = this.progress.get(origin)!;
          call.write({ seq: frame.batch.seq, durable: wire(progress.durable), region: this.region, refused });
        })
        .catch(fail);
    });
    call.on('end', () => {
      // The sender is done: answer what is under way, then close.
      void chain.then(() => {
        if (closed) return;
        closed = true;
        call.end();
      });
    });
    call.on('error', () => {
      closed = true;
    });
  }

  /** Checks the hello; returns the origin region. */
  private hello(frame: regionV1.RegionFrame__Output): string {
    const hello = frame.hello;
    if (hello === null || hello === undefined) throw new TallyError(ErrorCode.invalidArgument, 'the first frame must be a hello');
    if (hello.targetRegion !== this.region)
      throw new TallyError(
        ErrorCode.failedPrecondition,
        `this router serves region "${this.region}", not "${hello.targetRegion}": check --peer-regions of region ${hello.originRegion}`,
      );
    if (!this.peerNames.has(hello.originRegion))
      throw new TallyError(
        ErrorCode.failedPrecondition,
        `region "${hello.originRegion}" is not a peer of region ${this.region} (its --peer-regions names ${[...this.peerNames].join(', ') || 'none'})`,
      );
    return hello.originRegion;
  }

  /** Makes a batch durable; returns how many components were refused (a counter that cannot hold one). */
  private async apply(origin: string, batch: regionV1.ComponentBatch__Output): Promise<number> {
    if (batch.components.length > regionBatchComponentsMax)
      throw new TallyError(ErrorCode.invalidArgument, `a batch holds at most ${regionBatchComponentsMax} components`);
    const components: { counter: string; component: RegionComponent }[] = batch.components.map((each) => {
      const component: RegionComponent = {
        origin,
        version: versionOf(each.version),
        total: BigInt(each.total),
        asOfUnixMs: Number(each.asOfUnixMs),
        generation: Number(each.generation),
      };
      const problem = componentProblem(component);
      if (problem !== undefined) throw new TallyError(ErrorCode.invalidArgument, `component of "${each.counter}": ${problem}`);
      return { counter: each.counter, component };
    });
    let refused = 0;
    let bytes = 0;
    const outcomes = await Promise.all(
      components.map(async ({ counter, component }) => {
        bytes += componentWireBytes(counter, component);
        try {
          return await this.store.store(counter, component);
        } catch (error) {
          const code = error instanceof TallyError ? error.code : undefined;
          if (code === ErrorCode.failedPrecondition || code === ErrorCode.invalidArgument || code === ErrorCode.notFound) {
            refused++;
            this.logger.warn('region component refused', { origin, counter, error: (error as Error).message });
            return false;
          }
          throw error;
        }
      }),
    );
    this.metrics.bytes.inc({ peer: origin, direction: 'received' }, bytes);
    this.metrics.componentsApplied.inc({ peer: origin }, outcomes.filter(Boolean).length);
    const watermark = versionOf(batch.version);
    const previous = this.progress.get(origin);
    const asOfUnixMs = Number(batch.asOfUnixMs);
    const fresh =
      asOfUnixMs > 0 && (previous === undefined || compareVersions(watermark, previous.fresh.version) > 0)
        ? { version: watermark, asOfUnixMs }
        : (previous?.fresh ?? { version: zeroVersion, asOfUnixMs: 0 });
    this.progress.set(origin, {
      durable: maxVersion(previous?.durable ?? zeroVersion, watermark),
      fresh,
      lastBatchMs: monotonicNowMs(),
    });
    this.metrics.lagSeconds.set({ peer: origin }, 0);
    return refused;
  }
}

function wire(version: ComponentVersion): regionV1.ComponentVersion {
  return { term: version.term.toString(), round: version.round.toString() };
}
