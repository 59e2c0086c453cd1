// One background loop: a task every intervalMs on an unref'd timer, one run at
// a time (a tick during a run is skipped, not queued), errors logged and the
// loop goes on. It never decides what the task does, nor throws its operating
// errors; a failed assertion is a programmer error and still crashes the process.
import { AssertionError } from 'node:assert';
import type { Logger } from './logger.ts';

export interface IntervalTaskSettings {
  /** Names the task in its error line: "<name> failed". */
  name: string;
  intervalMs: number;
  logger: Logger;
}

export class IntervalTask {
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly settings: IntervalTaskSettings,
    private readonly task: () => void | Promise<void>,
  ) {}

  /** Runs the task every intervalMs from now (the first run one interval away). */
  start(): void {
    clearInterval(this.timer);
    this.timer = setInterval(() => void this.runNow(), this.settings.intervalMs);
    this.timer.unref();
  }

  /** No further runs start; one under way finishes. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Runs the task now, unless a run is under way (then returns at once). Never rejects; a failed assertion is rethrown outside it. */
  async runNow(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.task();
    } catch (error) {
      if (error instanceof AssertionError) {
        // Thrown outside this promise, so it is an uncaught exception: a broken assertion stops the process rather than being logged and retried.
        setImmediate(() => {
          throw error;
        });
        return;
      }
      this.settings.logger.error(`${this.settings.name} failed`, { error: error instanceof Error ? error.message : String(error) });
    } finally {
      this.running = false;
    }
  }
}
