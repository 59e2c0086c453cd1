// The history checker: decides from the recorded calls alone whether the
// cluster kept G1, G2 and G3, per counter. It trusts nothing the test computed
// on its own and knows nothing of faults: a history is safe or it is not.
import { describeOperation, type IncrementOperation, type Operation, type ReadOperation } from './history.ts';

export type Rule =
  /** An exact read missed increments acknowledged before it began (G1, G3). */
  | 'stale-read'
  /** An exact read returned less than a read that ended before it began, through any router (G3). */
  | 'read-went-back'
  /** A read counted more than every increment that may have applied by its end (G2: counted twice). */
  | 'over-count'
  /** The final total lies outside [acknowledged, acknowledged + unknown]. */
  | 'final-out-of-bounds'
  /** No final exact read succeeded after the faults healed and the cluster had time to recover (liveness). */
  | 'no-final-read'
  /** One key acknowledged as applied by two calls (G2). */
  | 'key-applied-twice'
  /** The load used one key for different counters or amounts: the history itself is wrong. */
  | 'key-reused-differently'
  /** Two nodes of a pair hold different entries at one log position for one epoch (two primaries). */
  | 'two-histories';

export interface Violation {
  rule: Rule;
  counter: string;
  message: string;
  /** The operations (or log rows) that show it, one per line. */
  excerpt: string[];
}

/** An amount that is in the total from `atMs` on (acknowledged) or may be from `atMs` on (invoked, outcome not failed). */
interface Event {
  atMs: number;
  amount: bigint;
  operation: IncrementOperation;
}

interface CounterFacts {
  /** Acknowledged amounts, at the end of their first acknowledgement; a key once. */
  acknowledged: Event[];
  /** Amounts that may have applied, at the start of their first call not known to have failed; a key once. */
  possible: Event[];
  /** Sum of possible amounts never acknowledged. */
  unknownTotal: bigint;
  reads: ReadOperation[];
}

const excerptLinesMax = 12;

function factsOf(operations: readonly Operation[], violations: Violation[]): Map<string, CounterFacts> {
  const facts = new Map<string, CounterFacts>();
  const of = (counter: string): CounterFacts => {
    let entry = facts.get(counter);
    if (entry === undefined) {
      entry = { acknowledged: [], possible: [], unknownTotal: 0n, reads: [] };
      facts.set(counter, entry);
    }
    return entry;
  };
  const attemptsByKey = new Map<string, IncrementOperation[]>();
  for (const operation of operations) {
    if (operation.kind === 'read') {
      if (operation.outcome === 'ok' && operation.total !== undefined) of(operation.counter).reads.push(operation);
      else of(operation.counter);
      continue;
    }
    if (operation.key !== undefined) {
      const attempts = attemptsByKey.get(operation.key) ?? [];
      attempts.push(operation);
      attemptsByKey.set(operation.key, attempts);
      continue;
    }
    const counter = of(operation.counter);
    if (operation.outcome === 'failed') continue;
    counter.possible.push({ atMs: operation.startMs, amount: operation.amount, operation });
    if (operation.outcome === 'ok') counter.acknowledged.push({ atMs: operation.endMs, amount: operation.amount, operation });
    else counter.unknownTotal += operation.amount;
  }
  for (const [key, attempts] of attemptsByKey) {
    const first = attempts[0]!;
    const counter = of(first.counter);
    if (attempts.some((attempt) => attempt.counter !== first.counter || attempt.amount !== first.amount)) {
      violations.push({
        rule: 'key-reused-differently',
        counter: first.counter,
        message: `key ${key} was sent with different counters or amounts`,
        excerpt: attempts.slice(0, excerptLinesMax).map(describeOperation),
      });
      continue;
    }
    const appliedAcks = attempts.filter((attempt) => attempt.outcome === 'ok' && attempt.applied !== false);
    if (appliedAcks.length > 1) {
      violations.push({
        rule: 'key-applied-twice',
        counter: first.counter,
        message: `key ${key} was acknowledged as applied ${appliedAcks.length} times`,
        excerpt: attempts.slice(0, excerptLinesMax).map(describeOperation),
      });
    }
    const mayHaveApplied = attempts.filter((attempt) => attempt.outcome !== 'failed');
    if (mayHaveApplied.length === 0) continue;
    const earliest = mayHaveApplied.reduce((best, attempt) => (attempt.startMs < best.startMs ? attempt : best));
    counter.possible.push({ atMs: earliest.startMs, amount: first.amount, operation: earliest });
    const acks = attempts.filter((attempt) => attempt.outcome === 'ok');
    if (acks.length === 0) {
      counter.unknownTotal += first.amount;
      continue;
    }
    const firstAck = acks.reduce((best, attempt) => (attempt.endMs < best.endMs ? attempt : best));
    counter.acknowledged.push({ atMs: firstAck.endMs, amount: first.amount, operation: firstAck });
  }
  return facts;
}

/** Events sorted by time with prefix sums: the amount in by any time, in O(log n). */
class Timeline {
  private readonly times: number[];
  private readonly sums: bigint[];

  constructor(readonly events: Event[]) {
    events.sort((a, b) => a.atMs - b.atMs);
    this.times = events.map((event) => event.atMs);
    this.sums = [0n];
    for (const event of events) this.sums.push(this.sums[this.sums.length - 1]! + event.amount);
  }

  /** How many events happened strictly before atMs. */
  countBefore(atMs: number): number {
    let low = 0;
    let high = this.times.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.times[middle]! < atMs) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  sumBefore(atMs: number): bigint {
    return this.sums[this.countBefore(atMs)]!;
  }

  /** The last few events before atMs, for an excerpt. */
  lastBefore(atMs: number, count: number): Event[] {
    const end = this.countBefore(atMs);
    return this.events.slice(Math.max(0, end - count), end);
  }

  get total(): bigint {
    return this.sums[this.sums.length - 1]!;
  }
}

function checkCounter(counter: string, facts: CounterFacts, violations: Violation[]): void {
  const acknowledged = new Timeline(facts.acknowledged);
  const possible = new Timeline(facts.possible);
  const reads = [...facts.reads].sort((a, b) => a.startMs - b.startMs);
  for (const read of reads) {
    const mustInclude = acknowledged.sumBefore(read.startMs);
    if (read.total! < mustInclude) {
      violations.push({
        rule: 'stale-read',
        counter,
        message: `exact read #${read.id} via r${read.router} returned ${read.total} but ${mustInclude} had been acknowledged before it began (${mustInclude - read.total!} missing)`,
        excerpt: [
          describeOperation(read),
          'last acknowledged before it:',
          ...acknowledged.lastBefore(read.startMs, excerptLinesMax - 2).map((event) => describeOperation(event.operation)),
        ],
      });
    }
    const mayInclude = possible.sumBefore(read.endMs);
    if (read.total! > mayInclude) {
      violations.push({
        rule: 'over-count',
        counter,
        message: `exact read #${read.id} via r${read.router} returned ${read.total} but at most ${mayInclude} could have applied by its end (${read.total! - mayInclude} counted twice or invented)`,
        excerpt: [
          describeOperation(read),
          ...possible.lastBefore(read.endMs, excerptLinesMax - 1).map((event) => describeOperation(event.operation)),
        ],
      });
    }
  }
  // Reads in order of their end: before each read begins, the highest total of any read already over.
  const byEnd = [...reads].sort((a, b) => a.endMs - b.endMs);
  let ended = 0;
  let highest: ReadOperation | undefined;
  for (const read of reads) {
    while (ended < byEnd.length && byEnd[ended]!.endMs < read.startMs) {
      const candidate = byEnd[ended++]!;
      if (highest === undefined || candidate.total! > highest.total!) highest = candidate;
    }
    if (highest !== undefined && read.total! < highest.total!) {
      violations.push({
        rule: 'read-went-back',
        counter,
        message: `exact read #${read.id} via r${read.router} returned ${read.total}, below ${highest.total} returned by #${highest.id} via r${highest.router} which ended before it began`,
        excerpt: [describeOperation(highest), describeOperation(read)],
      });
    }
  }
  const finals = reads.filter((read) => read.final === true);
  if (finals.length === 0) {
    violations.push({
      rule: 'no-final-read',
      counter,
      message: `no final exact read of ${counter} succeeded after the heal and the quiet period`,
      excerpt: [],
    });
  }
  for (const read of finals) {
    const low = acknowledged.total;
    const high = low + facts.unknownTotal;
    if (read.total! < low || read.total! > high) {
      violations.push({
        rule: 'final-out-of-bounds',
        counter,
        message: `final total ${read.total} via r${read.router} is outside [${low}, ${high}] (acknowledged ${low}, unknown ${facts.unknownTotal})`,
        excerpt: [describeOperation(read)],
      });
    }
  }
}

/**
 * Every violation in a history, per counter. `final` reads (after the load
 * stopped and the faults healed) must exist for every counter the history names.
 */
export function checkHistory(operations: readonly Operation[]): Violation[] {
  const violations: Violation[] = [];
  const facts = factsOf(operations, violations);
  for (const [counter, counterFacts] of [...facts].sort(([a], [b]) => a.localeCompare(b))) checkCounter(counter, counterFacts, violations);
  return violations;
}

/** A violation as text: rule, counter, message and excerpt. */
export function describeViolation(violation: Violation): string {
  return [`${violation.rule} on ${violation.counter}: ${violation.message}`, ...violation.excerpt.map((line) => `    ${line}`)].join('\n');
}
