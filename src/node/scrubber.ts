// Reads the whole log in the background at a bounded rate (G8): every entry
// the log keeps (its tail and the keyed rows the checkpoint keeps), every
// checkpoint block and every checkpoint part, each checked against its
// checksum as any read checks it,
// then starts over. Damage found is counted and logged, then handed to the
// log's onDamage as any damaged read is (the node stops and its next start
// sets the log aside, to be refilled from its partner), so a value that moved
// on a disk nobody reads is found within one pass, not when a failover needs it.
import { IntervalTask, type Logger } from '../common/index.ts';
import { isDamagedLog, type ShardLog } from './log/index.ts';

export interface ScrubSettings {
  /** Entries (or checkpoint blocks) read per second; 0 turns the scrubber off. */
  entriesPerSecond: number;
  /** Steps per second: each reads entriesPerSecond / stepsPerSecond, so no step holds the event loop long. */
  stepsPerSecond: number;
}

export interface ScrubObserver {
  /** Entries or blocks read in a step (progress). */
  onRead(kind: 'entries' | 'blocks' | 'parts', count: number): void;
  /** A whole pass over the log finished. */
  onPass(): void;
  /** A read failed its check; the log's onDamage is told next. */
  onMismatch(error: Error): void;
}

export class LogScrubber {
  private readonly task: IntervalTask | undefined;
  private readonly stepSize: number;
  /** Where the pass is: after this lsn in the entries, then after this first shard in the blocks. */
  private afterLsn = 0n;
  private afterFirstShard = -1;
  /** Then after this shard and part name in the checkpoint's parts. */
  private afterPart: [shardId: number, part: string] = [-1, ''];
  private phase: 'entries' | 'blocks' | 'parts' = 'entries';

  constructor(
    private readonly log: ShardLog,
    settings: ScrubSettings,
    private readonly observer: ScrubObserver,
    private readonly logger: Logger,
  ) {
    this.stepSize = Math.max(1, Math.ceil(settings.entriesPerSecond / settings.stepsPerSecond));
    if (settings.entriesPerSecond > 0)
      this.task = new IntervalTask({ name: 'scrub', intervalMs: Math.round(1_000 / settings.stepsPerSecond), logger }, () => this.step());
  }

  start(): void {
    this.task?.start();
  }

  stop(): void {
    this.task?.stop();
  }

  /** One bounded read from where the pass is. */
  step(): void {
    try {
      if (this.phase === 'entries') {
        const { count, lastLsn } = this.log.scrubEntries(this.afterLsn, this.stepSize);
        if (count === 0) this.phase = 'blocks';
        else this.observer.onRead('entries', count);
        this.afterLsn = lastLsn;
        return;
      }
      if (this.phase === 'blocks') {
        const { count, lastFirstShard } = this.log.scrubBlocks(this.afterFirstShard, this.stepSize);
        if (count === 0) this.phase = 'parts';
        else this.observer.onRead('blocks', count);
        this.afterFirstShard = lastFirstShard;
        return;
      }
      const { count, lastShardId, lastPart } = this.log.scrubParts(this.afterPart[0], this.afterPart[1], this.stepSize);
      if (count === 0) {
        this.afterLsn = 0n;
        this.afterFirstShard = -1;
        this.afterPart = [-1, ''];
        this.phase = 'entries';
        this.observer.onPass();
        return;
      }
      this.observer.onRead('parts', count);
      this.afterPart = [lastShardId, lastPart];
    } catch (error) {
      // A failing disk is not damage: the step is tried again next time.
      if (!isDamagedLog(error)) throw error;
      this.observer.onMismatch(error as Error);
      this.logger.error('scrub found the log damaged', { phase: this.phase, error: (error as Error).message });
      this.log.onDamage?.(error);
    }
  }
}
