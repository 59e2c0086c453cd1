// The order in which a call tries a client's routers: round-robin over the
// routers not recently failed, then the failed ones, soonest back first.
// Bookkeeping only, with an injected clock: it holds no channel and sends nothing.
import assert from 'node:assert';
import { routerAvoidMsMax, routerAvoidMsMin, monotonicNowMs } from '../../wire/index.ts';

// Why round-robin per call and not one preferred router per client:
// - it spreads each client's own load, so one busy application process (or
//   one bench) uses every router, not the one it happened to prefer;
// - when a router dies, each client's share of it moves to all the others,
//   where a preferred router's clients would all land on the same next one;
// - there is no preferred router to choose, lose and choose again.
// Its cost: a connection (and keepalive pings) to each router, and a
// router's read cache sees only part of a client's reads (cached reads may
// differ in staleness from one call to the next; exact reads never differ).
// Keyed retries may take any turn: the routers share one directory.

export class RouterRotation {
  private turn: number;
  private readonly avoidUntilMs: number[];
  private readonly failures: number[];

  constructor(
    readonly routerCount: number,
    private readonly nowMs: () => number = monotonicNowMs,
    random: () => number = Math.random,
  ) {
    assert(Number.isInteger(routerCount) && routerCount >= 1, `routerCount ${routerCount}`);
    // A random first turn: a CLI run makes one call, and every one of them
    // starting at the first address would leave the others idle.
    this.turn = Math.floor(random() * routerCount);
    this.avoidUntilMs = new Array<number>(routerCount).fill(0);
    this.failures = new Array<number>(routerCount).fill(0);
  }

  /**
   * Every router index once: from this call's turn on, the ones not avoided
   * first, then the avoided ones by the end of their avoidance, so a call
   * still goes somewhere when every router has failed lately.
   */
  order(): number[] {
    const start = this.turn;
    this.turn = (this.turn + 1) % this.routerCount;
    const nowMs = this.nowMs();
    const open: number[] = [];
    const avoided: number[] = [];
    for (let offset = 0; offset < this.routerCount; offset++) {
      const index = (start + offset) % this.routerCount;
      (this.avoidUntilMs[index]! > nowMs ? avoided : open).push(index);
    }
    avoided.sort((a, b) => this.avoidUntilMs[a]! - this.avoidUntilMs[b]!);
    return [...open, ...avoided];
  }

  /**
   * A call to the router failed UNAVAILABLE or DEADLINE_EXCEEDED, or found it
   * unreachable: passed over for routerAvoidMsMin, doubled per failure up to
   * routerAvoidMsMax. Failures while it is avoided do not count: the calls
   * in flight when a router dies all fail at once, and that is one failure.
   */
  failed(index: number): void {
    const nowMs = this.nowMs();
    if (this.avoidUntilMs[index]! > nowMs) return;
    const failures = ++this.failures[index]!;
    this.avoidUntilMs[index] = nowMs + Math.min(routerAvoidMsMax, routerAvoidMsMin * 2 ** Math.min(failures - 1, 16));
  }

  /** The router answered (with success or a status of its own): its failures are forgotten. */
  answered(index: number): void {
    this.failures[index] = 0;
    this.avoidUntilMs[index] = 0;
  }

  avoided(index: number): boolean {
    return this.avoidUntilMs[index]! > this.nowMs();
  }
}
