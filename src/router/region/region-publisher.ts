// This region's publisher: on the supervising router only (one per region),
// it reads the exact total of every total counter each round and hands the
// ones that changed, as components at version (term, round), to a link per
// peer region. Reads are exact (G3: they include every increment
// acknowledged before they began and never go backwards), rounds never
// overlap, and the term is higher for every tenure: so a later version
// never holds an older total. It never writes to this region's counters.
import {
  IntervalTask,
  monotonicNowMs,
  regionFullSweepRounds,
  type ComponentVersion,
  type Logger,
  type RegionComponent,
} from '../../common/index.ts';
import type { CounterInfo } from '../directory/index.ts';
import type { TotalRead } from '../read/index.ts';
import type { PeerLink, PublishedTable } from './peer-link.ts';
import type { TermSource } from './publish-term.ts';
import { publishesSketch, readSketches, type SketchReads } from './sketch-source.ts';

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
    /** Distinct counters' sketches; without it they stay in their region. */
    private readonly sketches?: SketchReads,
  ) {
    this.task = new IntervalTask({ name: 'region publisher round', intervalMs: publishIntervalMs, logger }, () => this.runRound());
  }

  /**
   * A write or clear through this router reached the counter: the next round
   * reads it. Writes through other routers (etcd) are caught by the full
   * sweep every regionFullSweepRounds rounds.
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

  /** One round: the counters to read read exactly, the changed ones offered to every link. Never two at once (the task's runs, or a test's calls). */
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
    // The first round of a term and every regionFullSweepRounds-th read every counter; the others what was written here.
    const sweep = this.round % BigInt(regionFullSweepRounds) === 1n;
    const written = this.dirty;
    this.dirty = new Set();
    const names: string[] = [];
    const sketchNames: string[] = [];
    if (sweep) {
      for (const counter of this.directory.liveCounters()) {
        if (isPublishable(counter)) names.push(counter.name);
        else if (publishesSketch(counter)) sketchNames.push(counter.name);
      }
    } else {
      for (const name of written) {
        const counter = this.directory.get(name);
        if (counter !== undefined && isPublishable(counter)) names.push(name);
        else if (counter !== undefined && publishesSketch(counter)) sketchNames.push(name);
      }
    }
    const changed: string[] = [];
    if (!(await this.publishSketches(sketchNames, version, roundAsOfUnixMs, changed))) return;
    for (let start = 0; start < names.length; start += roundReadBatchMax) {
      let reads: TotalRead[];
      try {
        reads = await this.reads.readExact(names.slice(start, start + roundReadBatchMax));
      } catch (error) {
        // A pair that cannot be read now: its counters wait for a later round (a higher version).
        this.logger.debug('region publisher read failed', { error: (error as Error).message });
        for (const name of names.slice(start, start + roundReadBatchMax)) this.dirty.add(name);
        continue;
      }
      if (!this.active) return;
      for (const read of reads) {
        if (read.source === undefined) continue;
        const held = this.table.get(read.counter);
        // A clear with no increment since still ships: the generation tells the peers to clear.
        if (held !== undefined && held.total === read.total && held.generation === read.generation) continue;
        this.table.set(read.counter, {
          origin: this.region,
          version,
          total: read.total,
          asOfUnixMs: read.asOfMs,
          generation: read.generation,
        });
        changed.push(read.counter);
      }
    }
    // Offered even when empty: the round is whole, so the links' watermark may pass it.
    for (const link of this.links) link.offer(changed, version, roundAsOfUnixMs);
    this.lastRoundMs = monotonicNowMs();
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
      const held = this.table.get(read.counter);
      if (held?.sketch !== undefined && held.generation === read.generation && held.sketch.equals(read.sketch)) continue;
      this.table.set(read.counter, {
        origin: this.region,
        version,
        total: read.estimate,
        asOfUnixMs,
        generation: read.generation,
        sketch: read.sketch,
      });
      changed.push(read.counter);
    }
    return true;
  }
}
