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
  decodeBatchComponents,
  maxVersion,
  zeroVersion,
  type ComponentVersion,
  type CounterComponent,
  type RegionComponent,
} from '../../wire/internal/index.ts';
import {
  regionBatchComponentsMax,
  regionReceiverBatchesStoringAtOnce,
  regionReceiverBatchesStoringMax,
  type Logger,
  type regionV1,
} from '../../common/index.ts';
import { HllSketch } from '../../sketch/index.ts';
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

  /**
   * The Exchange handler. Batches are stored as they arrive, several at once
   * (the node keeps the newest version whatever order they land in), and
   * answered in order: a batch's answer, and the durable watermark it moves,
   * wait until every earlier batch of the stream is durable too.
   */
  exchange(call: ExchangeCall): void {
    let origin: string | undefined;
    let chain = Promise.resolve();
    let closed = false;
    let storing = 0;
    /** Settles once the hello is checked: batches start storing from then on, without waiting for earlier answers. */
    let helloChecked = Promise.resolve();
    /**
     * The last regionReceiverBatchesStoringAtOnce batches' stores: a batch starts once the one that many
     * before it is stored, so a link catching up keeps the nodes busy without crowding out this region's own writes.
     */
    const recentStores: Promise<unknown>[] = [];
    const fail = (error: unknown): void => {
      if (closed) return;
      closed = true;
      if (origin) this.metrics.errors.inc({ peer: origin, reason: 'apply' });
      call.emit('error', toServiceError(error));
    };
    call.on('data', (frame: regionV1.RegionFrame__Output) => {
      if (closed) return;
      if (origin === undefined) {
        chain = chain
          .then(() => {
            if (closed) return;
            origin = this.hello(frame);
            const progress = this.progress.get(origin);
            call.write({
              seq: '0',
              durable: wire(progress?.durable ?? zeroVersion),
              region: this.region,
              refused: 0,
              readsPackedComponents: true,
            });
          })
          .catch(fail);
        helloChecked = chain;
        // Frames after the hello wait for it to be checked: origin is set in the same turn as the check.
        origin = '';
        return;
      }
      const batch = frame.batch;
      if (batch === null || batch === undefined) {
        fail(new TallyError(ErrorCode.invalidArgument, 'after the hello every frame is a batch'));
        return;
      }
      if (storing >= regionReceiverBatchesStoringMax) {
        fail(new TallyError(ErrorCode.resourceExhausted, `more than ${regionReceiverBatchesStoringMax} batches unanswered on one stream`));
        return;
      }
      storing++;
      const turn = recentStores.length < regionReceiverBatchesStoringAtOnce ? helloChecked : recentStores.shift()!;
      const stored = turn.then(
        () => (closed ? 0 : this.storeBatch(origin!, batch)),
        () => 0,
      );
      recentStores.push(stored.catch(() => undefined));
      // Handled below, in order; this only keeps an early failure from going unhandled meanwhile.
      stored.catch(() => undefined);
      chain = chain
        .then(async () => {
          const refused = await stored;
          if (closed) return;
          this.advance(origin!, batch);
          call.write({ seq: batch.seq, durable: wire(this.progress.get(origin!)!.durable), region: this.region, refused });
        })
        .catch(fail)
        .finally(() => {
          storing--;
        });
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
  private async storeBatch(origin: string, batch: regionV1.ComponentBatch__Output): Promise<number> {
    const components = batch.packedComponents.length > 0 ? packedComponentsOf(origin, batch) : componentsOf(origin, batch);
    let refused = 0;
    let bytes = 0;
    await this.store.prepare(components);
    for (const { counter, component } of components) bytes += componentWireBytes(counter, component);
    // One packed log entry per primary for the batch's totals: a link catching up writes a row per batch, not per component.
    const { settled, applied, unpacked } = await this.store.storePacked(components);
    settled.forEach((outcome, index) => {
      if (outcome.status === 'fulfilled') return;
      const error: unknown = outcome.reason;
      const code = error instanceof TallyError ? error.code : undefined;
      if (code === ErrorCode.failedPrecondition || code === ErrorCode.invalidArgument || code === ErrorCode.notFound) {
        refused++;
        this.logger.warn('region component refused', { origin, counter: components[index]!.counter, error: (error as Error).message });
        return;
      }
      throw error;
    });
    this.metrics.bytes.inc({ peer: origin, direction: 'received' }, bytes);
    this.metrics.componentsApplied.inc({ peer: origin }, applied);
    if (unpacked > 0) this.metrics.componentsUnpacked.inc({ peer: origin }, unpacked);
    return refused;
  }

  /** Every batch of the stream up to this one is durable: what the origin is known to hold moves to its watermark. */
  private advance(origin: string, batch: regionV1.ComponentBatch__Output): void {
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
  }
}

/** A batch's components sent a message each (every sender before packed batches, and to a receiver that does not say it reads them). */
function componentsOf(origin: string, batch: regionV1.ComponentBatch__Output): CounterComponent[] {
  if (batch.components.length > regionBatchComponentsMax)
    throw new TallyError(ErrorCode.invalidArgument, `a batch holds at most ${regionBatchComponentsMax} components`);
  return batch.components.map((each) => {
    const component: RegionComponent = {
      origin,
      version: versionOf(each.version),
      total: BigInt(each.total),
      asOfUnixMs: Number(each.asOfUnixMs),
      generation: Number(each.generation),
      ...(each.sketch.length > 0 ? { sketch: Buffer.from(each.sketch) } : {}),
      ...(each.incarnation !== '0' ? { incarnation: Number(each.incarnation) } : {}),
      ...(each.tombstone ? { tombstone: true } : {}),
    };
    const problem = componentProblem(component) ?? sketchProblem(component.sketch);
    if (problem !== undefined) throw new TallyError(ErrorCode.invalidArgument, `component of "${each.counter}": ${problem}`);
    return { counter: each.counter, component };
  });
}

/** A batch's components sent as columns: every record must be the stream's origin's. */
function packedComponentsOf(origin: string, batch: regionV1.ComponentBatch__Output): CounterComponent[] {
  if (batch.components.length > 0)
    throw new TallyError(ErrorCode.invalidArgument, 'a batch carries its components as messages or as columns, not both');
  let rows: CounterComponent[];
  try {
    rows = decodeBatchComponents(batch.packedComponents);
  } catch (error) {
    throw new TallyError(ErrorCode.invalidArgument, `packed components: ${(error as Error).message}`);
  }
  if (rows.length > regionBatchComponentsMax)
    throw new TallyError(ErrorCode.invalidArgument, `a batch holds at most ${regionBatchComponentsMax} components`);
  for (const { counter, component } of rows) {
    if (component.origin !== origin)
      throw new TallyError(ErrorCode.invalidArgument, `component of "${counter}": origin "${component.origin}" on a stream from ${origin}`);
    const problem = sketchProblem(component.sketch);
    if (problem !== undefined) throw new TallyError(ErrorCode.invalidArgument, `component of "${counter}": ${problem}`);
  }
  return rows;
}

/** Why a component's sketch is no sketch a node could have stored, or undefined. */
function sketchProblem(sketch: Buffer | undefined): string | undefined {
  if (sketch === undefined) return undefined;
  try {
    HllSketch.deserialize(sketch);
    return undefined;
  } catch (error) {
    return `sketch malformed: ${(error as Error).message}`;
  }
}

function wire(version: ComponentVersion): regionV1.ComponentVersion {
  return { term: version.term.toString(), round: version.round.toString() };
}
