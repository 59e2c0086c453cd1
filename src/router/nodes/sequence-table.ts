// The frames one node stream has in flight, by sequence number: an answer
// finds its frame here exactly once. An answer for a seq not in flight
// (answered twice, after its deadline, or never sent) finds nothing and is
// counted, never handed to another frame's caller.
import assert from 'node:assert/strict';
import { frameSeqMax } from '../../wire/internal/index.ts';

export class SequenceTable<Entry> {
  private readonly entries = new Map<number, Entry>();
  private nextSeq = 1;
  /** Answers that matched no frame in flight. */
  strayAnswers = 0;

  get size(): number {
    return this.entries.size;
  }

  /** False once every seq of this stream is used: the stream must be replaced (after its frames in flight are settled). */
  get hasRoom(): boolean {
    return this.nextSeq <= frameSeqMax;
  }

  /** Adds a frame; returns its seq (never one in flight, never 0). */
  add(entry: Entry): number {
    assert(this.hasRoom, 'sequence table: every seq of this stream is used');
    const seq = this.nextSeq++;
    this.entries.set(seq, entry);
    return seq;
  }

  /** The frame seq answers, removed; undefined (and counted) when none is in flight. */
  take(seq: number): Entry | undefined {
    const entry = this.entries.get(seq);
    if (entry === undefined) {
      this.strayAnswers++;
      return undefined;
    }
    this.entries.delete(seq);
    return entry;
  }

  /** Removes a frame without counting anything (its deadline passed). */
  forget(seq: number): Entry | undefined {
    const entry = this.entries.get(seq);
    this.entries.delete(seq);
    return entry;
  }

  /** Every frame in flight, removed (the stream broke or was abandoned). */
  takeAll(): Entry[] {
    const all = [...this.entries.values()];
    this.entries.clear();
    return all;
  }
}
