// This region's publisher: on the supervising router only (one per region),
// it reads the exact total of every total counter each round and hands the
// ones that changed, as components at version (term, round), to a link per
// peer region. Reads are exact (G3: they include every increment
// acknowledged before they began and never go backwards), rounds never
// overlap, and the term is higher for every tenure: so a later version
// never holds an older total. It never writes to this region's counters.
import { IntervalTask, regionFullSweepRounds, type Logger } from '../../common/index.ts';
import { monotonicNowMs } from '../../wire/index.ts';
import { type ComponentVersion, type RegionComponent } from '../../wire/internal/index.ts';
import type { CounterInfo } from '../directory/index.ts';
import type { TotalRead } from '../read/index.ts';
import type { PeerLink, PublishedTable } from './peer-link.ts';
import type { TermSource } from './publish-term.ts';

/** Counters read per exact ReadMany of a round. */
const roundReadBatchMax = 256;

export interface PublisherDirectory {
  liveCounters(options?: { reuseHandle?: boolean }): IterableIterator<CounterInfo>;
  get(name: string): CounterInfo | undefined;
}

export interface PublisherReads {
  readExact(names: readonly string[]): Promise<TotalRead[]>;
}

/** Window and membership counters stay in their region; distinct counts do not cross yet. */
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
    if (sweep) {
      for (const counter of this.directory.liveCounters()) if (isPublishable(counter)) names.push(counter.name);
    } else {
      for (const name of written) {
        const counter = this.directory.get(name);
        if (counter !== undefined && isPublishable(counter)) names.push(name);
      }
    }
    const changed: string[] = [];
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
}
