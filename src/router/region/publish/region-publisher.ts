// This region's publisher: on the supervising router only (one per region),
// it takes each round the totals that changed (from the nodes' feeds of
// changed shards, or exact reads) and hands them, as components at version
// (term, round), to a link per peer region. Every total it takes counts only
// what a failover can no longer drop and is taken after the last round's
// (G3), rounds never overlap, and the term is higher for every tenure: so a
// later version never holds an older total. It never writes to this region's
// counters.
import { IntervalTask, regionFullSweepRounds, type Logger } from '../../../common/index.ts';
import { monotonicNowMs } from '../../../wire/index.ts';
import { incarnationOf, type ComponentVersion, type RegionComponent } from '../../../wire/internal/index.ts';
import type { CounterInfo } from '../../directory/index.ts';
import type { TotalRead } from '../../read/index.ts';
import type { PeerLink, PublishedTable } from '../peer-link.ts';
import type { TermSource } from './publish-term.ts';
import type { ShardFeed } from './shard-feed.ts';
import { publishesSketch, readSketches, type SketchReads } from './sketch-source.ts';
import type { TombstoneSource } from './tombstone-source.ts';

/** Counters read per exact ReadMany of a round. */
const roundReadBatchMax = 256;

export interface PublisherDirectory {
  liveCounters(options?: { reuseHandle?: boolean }): IterableIterator<CounterInfo>;
  get(name: string): CounterInfo | undefined;
}

export interface PublisherReads {
  readExact(names: readonly string[]): Promise<TotalRead[]>;
}

/** Totals; distinct counters publish their sketch (sketch-source.ts); window and membership counters stay in their region. */
export function isPublishable(counter: CounterInfo): boolean {
  return counter.kind === 'total' && counter.window.bucketMs === 0;
}

export class RegionPublisher implements PublishedTable {
  private readonly table = new Map<string, RegionComponent>();
  /** Counters written through this router since the last round drained them. */
  private dirty = new Set<string>();
  /** With a feed: counters whose exact read failed, read again next round (the feed has moved past their change). */
  private retryExact = new Set<string>();
  private term = 0n;
  private round = 0n;
  private readonly task: IntervalTask;
  private active = false;
  private lastRoundMs = 0;

  constructor(
    private readonly region: string,
    private readonly directory: PublisherDirectory,
    private readonly reads: PublisherReads,
    private readonly links: readonly PeerLink[],
    private readonly termSource: TermSource,
    private readonly logger: Logger,
    publishIntervalMs: number,
    /** Where totals come from: the nodes' feeds of changed shards; without one, exact reads of what was written here and a sweep every regionFullSweepRounds. */
    private readonly feed?: ShardFeed,
    /** Distinct counters' sketches; without it they stay in their region. */
    private readonly sketches?: SketchReads,
    /** Deleted names, shipped as tombstones, and the incarnation a total was taken at; without it every incarnation is 0. */
    private readonly tombstones?: TombstoneSource,
  ) {
    this.task = new IntervalTask({ name: 'region publisher round', intervalMs: publishIntervalMs, logger }, () => this.runRound());
  }

  /**
   * A write or clear through this router reached the counter: the next round
   * indexes its shards for the feed (and reads a clear the shards have not
   * applied yet). Without a feed, the next round reads it, and writes through
   * other routers (etcd) are caught by the sweep every regionFullSweepRounds rounds.
   */
  markWritten(counter: string): void {
    if (this.active) this.dirty.add(counter);
  }

  /** True while this router publishes (it is the supervisor). */
  get isActive(): boolean {
    return this.active;
  }

  get(counter: string): RegionComponent | undefined {
    return this.table.get(counter);
  }

  entries(): IterableIterator<[string, RegionComponent]> {
    return this.table.entries();
  }

  /** SupervisorDuty: publishing starts with a new term when this router becomes the supervisor. */
  start(): void {
    this.active = true;
    this.term = 0n;
    this.round = 0n;
    this.table.clear();
    this.retryExact.clear();
    this.feed?.reset();
    for (const link of this.links) link.start();
    // The first round one interval from now: rounds run only from this task, one at a time.
    this.task.start();
  }

  stop(): void {
    this.active = false;
    this.task.stop();
    for (const link of this.links) link.stop();
    this.table.clear();
  }

  /** Milliseconds since the last complete round (Infinity: none yet). */
  sinceLastRoundMs(): number {
    return this.lastRoundMs === 0 ? Infinity : monotonicNowMs() - this.lastRoundMs;
  }

  /** One round: the changed totals taken (from the feed, or by exact reads), the changed ones offered to every link. Never two at once (the task's runs, or a test's calls). */
  async runRound(): Promise<void> {
    if (!this.active) return;
    if (this.term === 0n) {
      this.term = await this.termSource();
      this.logger.info('region publisher', { region: this.region, term: this.term.toString() });
    }
    this.round++;
    // eslint-disable-next-line no-restricted-properties -- a timestamp shown to readers (as_of_unix_ms), never a duration
    const roundAsOfUnixMs = Date.now();
    const version: ComponentVersion = { term: this.term, round: this.round };
    const written = this.dirty;
    this.dirty = new Set();
    const changed: string[] = [];
    this.tombstones?.collect(this.table, version, roundAsOfUnixMs, changed);
    if (!(await this.publishSketches(this.sketchNames(written), version, roundAsOfUnixMs, changed))) return;
    let names: Iterable<string>;
    let complete = true;
    if (this.feed !== undefined) {
      const fed = await this.feed.collect(written, (name) => this.table.get(name)?.generation);
      if (!this.active) return;
      for (const { counter, total, generation } of fed.totals)
        if (this.take(counter, total, generation, roundAsOfUnixMs, version)) changed.push(counter);
      for (const name of this.retryExact) fed.exactNames.add(name);
      this.retryExact = new Set();
      names = fed.exactNames;
      complete = fed.complete;
    } else names = this.sweepNames(written);
    const batch: string[] = [];
    const readBatch = async (): Promise<boolean> => {
      let reads: TotalRead[];
      try {
        reads = await this.reads.readExact(batch);
      } catch (error) {
        // A pair that cannot be read now: its counters wait for a later round (a higher version).
        this.logger.debug('region publisher read failed', { error: (error as Error).message });
        for (const name of batch) (this.feed === undefined ? this.dirty : this.retryExact).add(name);
        complete = false;
        return this.active;
      }
      if (!this.active) return false;
      for (const read of reads)
        if (read.source !== undefined && this.take(read.counter, read.total, read.generation, read.asOfMs, version, read.source))
          changed.push(read.counter);
      return true;
    };
    for (const name of names) {
      batch.push(name);
      if (batch.length < roundReadBatchMax) continue;
      if (!(await readBatch())) return;
      batch.length = 0;
    }
    if (batch.length > 0 && !(await readBatch())) return;
    // Offered even when empty: the round is whole, so the links' watermark may pass it. It vouches for
    // freshness (as_of) only when it saw every change: a pair it could not read leaves it 0.
    for (const link of this.links) link.offer(changed, version, complete ? roundAsOfUnixMs : 0);
    this.lastRoundMs = monotonicNowMs();
  }

  /** Without a feed: the first round of a term and every regionFullSweepRounds-th read every counter; the others what was written here. */
  private sweepNames(written: ReadonlySet<string>): string[] {
    const sweep = this.round % BigInt(regionFullSweepRounds) === 1n;
    const names: string[] = [];
    if (sweep) {
      for (const counter of this.directory.liveCounters()) if (isPublishable(counter)) names.push(counter.name);
    } else {
      for (const name of written) {
        const counter = this.directory.get(name);
        if (counter !== undefined && isPublishable(counter)) names.push(name);
      }
    }
    return names;
  }

  /**
   * Distinct counters to read this round: those written through this router,
   * and every one on the first round of a term and each regionFullSweepRounds-th
   * (the feed carries totals only: a sketch written through another router waits for a sweep).
   */
  private sketchNames(written: ReadonlySet<string>): string[] {
    if (this.sketches === undefined) return [];
    const names: string[] = [];
    if (this.round % BigInt(regionFullSweepRounds) === 1n) {
      for (const counter of this.directory.liveCounters()) if (publishesSketch(counter)) names.push(counter.name);
    } else {
      for (const name of written) {
        const counter = this.directory.get(name);
        if (counter !== undefined && publishesSketch(counter)) names.push(name);
      }
    }
    return names;
  }

  /** The round's distinct counters: each sketch that changed becomes a component. False when publishing stopped meanwhile. */
  private async publishSketches(
    names: readonly string[],
    version: ComponentVersion,
    asOfUnixMs: number,
    changed: string[],
  ): Promise<boolean> {
    if (this.sketches === undefined || names.length === 0) return true;
    const { sketches, retry, firstError } = await readSketches(names, this.directory, this.sketches);
    if (!this.active) return false;
    if (firstError !== undefined) this.logger.debug('region publisher sketch read failed', { error: firstError.message });
    for (const name of retry) this.dirty.add(name);
    for (const read of sketches) {
      const incarnation = this.incarnationOf(read.counter);
      if (incarnation === undefined) continue;
      const held = this.table.get(read.counter);
      if (
        held?.sketch !== undefined &&
        held.generation === read.generation &&
        incarnationOf(held) === incarnation &&
        held.sketch.equals(read.sketch)
      )
        continue;
      this.table.set(read.counter, {
        origin: this.region,
        version,
        total: read.estimate,
        asOfUnixMs,
        generation: read.generation,
        sketch: read.sketch,
        ...(incarnation > 0 ? { incarnation } : {}),
      });
      changed.push(read.counter);
    }
    return true;
  }

  /** Holds a counter's total read at version; true when it changed since it was last published. */
  private take(
    counter: string,
    total: bigint,
    generation: number,
    asOfUnixMs: number,
    version: ComponentVersion,
    source?: CounterInfo,
  ): boolean {
    const incarnation = this.incarnationOf(counter, source);
    if (incarnation === undefined) return false;
    const held = this.table.get(counter);
    // A clear with no increment since still ships: the generation tells the peers to clear.
    if (held !== undefined && held.total === total && held.generation === generation && incarnationOf(held) === incarnation) return false;
    this.table.set(counter, { origin: this.region, version, total, asOfUnixMs, generation, ...(incarnation > 0 ? { incarnation } : {}) });
    return true;
  }

  /** The incarnation a total of the live counter was taken at; undefined when the counter read (source) was deleted since. */
  private incarnationOf(counter: string, source?: CounterInfo): number | undefined {
    return this.tombstones === undefined ? 0 : this.tombstones.incarnationOf(counter, source);
  }
}
