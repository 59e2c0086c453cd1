// The etcd directory's one way to change etcd: an optimistic transaction
// conditioned on the revisions memory holds of the keys it read, run one at
// a time in this router's lane, resolving once the watch has brought the
// change back into memory. Also the waits on memory catching up.
import assert from 'node:assert';
import type { ComparatorBuilder, IRequestOp, ITxnResponse, Namespace } from 'etcd3';
import { ErrorCode, TallyError, deadlineIn } from '../../../wire/index.ts';
import { directoryChangeAttemptsMax, directoryWatchApplyTimeoutMs, etcdCallTimeoutMs, etcdTxnOpsMax } from '../../../common/index.ts';
import { storeError } from './client.ts';
import type { EtcdMirror } from './mirror.ts';

/**
 * Adds compares to a pair update's transaction (the supervisor election:
 * "this router still holds the supervisor key"), with txn.and(key, target,
 * '==', value). Keys are relative to the directory's prefix, as
 * client.namespace(prefix) sees them: e.g. txn.and('supervisor', 'Lease',
 * '==', leaseId). When a fence compare fails, updatePair fails
 * FAILED_PRECONDITION and changes nothing. May throw a TallyError to refuse
 * the update outright (e.g. not the supervisor now).
 */
export type PairUpdateFence = (txn: ComparatorBuilder) => void;

/** A change's plan: the answer without a transaction, or the keys it read, its operations and its answer once committed. */
export type Planned<T> = { done: T } | { read: string[]; ops: IRequestOp[]; result: () => T };
export type CommitOutcome = 'committed' | 'changed' | 'fenced';

interface Waiter {
  ready: () => boolean;
  resolve: () => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** Runs tasks one at a time: this router's changes never race each other. */
export class SerialLane {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

export class EtcdTransactions {
  readonly lane = new SerialLane();
  private readonly waiters = new Set<Waiter>();
  private closed = false;

  constructor(
    private readonly ns: Namespace,
    private readonly prefix: string,
    private readonly mirror: EtcdMirror,
    /** Throws UNAVAILABLE while this router cannot vouch for its copy. */
    private readonly assertFresh: () => void,
  ) {}

  key(relative: string): Buffer {
    return Buffer.from(this.prefix + relative, 'utf8');
  }

  put(relative: string, value: Buffer): IRequestOp {
    return { request_put: { key: this.key(relative), value } };
  }

  remove(relative: string): IRequestOp {
    return { request_delete_range: { key: this.key(relative) } };
  }

  /**
   * Runs one change in this router's lane: `plan` reads memory and returns
   * the transaction (or the answer without one); it commits only if every
   * key it read is at the revision memory holds (taken in the same turn as
   * the plan). prepare: runs before each plan (e.g. reserves shard ids),
   * so the plan and its transaction follow in one turn on what memory
   * holds then. A failed compare waits until memory has caught up with
   * those keys, then plans again (bounded).
   */
  change<T>(what: string, plan: () => Planned<T>, prepare?: () => Promise<void>): Promise<T> {
    return this.lane.run(async () => {
      for (let attempt = 1; ; attempt++) {
        this.assertFresh();
        if (prepare !== undefined) await prepare();
        const planned = plan();
        if ('done' in planned) return planned.done;
        if ((await this.commit(planned.read, planned.ops)) === 'committed') return planned.result();
        if (attempt >= directoryChangeAttemptsMax)
          throw new TallyError(ErrorCode.unavailable, `${what}: other routers changed the same directory keys first ${attempt} times`);
      }
    });
  }

  /**
   * One transaction: `ops` if each key of `read` is at the revision memory
   * holds (absent: 0) and the fence passes. Committed: resolves once the
   * watch has applied it. Not: resolves once memory has caught up with the
   * keys read ('fenced' when they had not changed: the fence failed).
   */
  async commit(read: readonly string[], ops: readonly IRequestOp[], fence?: PairUpdateFence): Promise<CommitOutcome> {
    assert(read.length > 0 && ops.length > 0 && read.length <= etcdTxnOpsMax && ops.length <= etcdTxnOpsMax, 'transaction size');
    const expected = read.map((key) => this.mirror.revisionOf(key) ?? 0);
    let txn = this.ns.if(read[0]!, 'Mod', '==', expected[0]!);
    for (let index = 1; index < read.length; index++) txn = txn.and(read[index]!, 'Mod', '==', expected[index]!);
    fence?.(txn);
    txn.then(...ops).else(...read.map((key): IRequestOp => ({ request_range: { key: this.key(key) } })));
    let response: ITxnResponse;
    try {
      response = await txn.options({ deadline: deadlineIn(etcdCallTimeoutMs) }).commit();
    } catch (error) {
      throw storeError(error);
    }
    const revision = Number(response.header.revision);
    if (response.succeeded) {
      await this.waitUntil(
        () => this.mirror.appliedRevision >= revision,
        directoryWatchApplyTimeoutMs,
        `the change committed to etcd at revision ${revision} to come back through the watch (it stands, and will)`,
      );
      return 'committed';
    }
    const current = response.responses.map((op) => op.response_range?.kvs?.[0]);
    const fenced = current.every((kv, index) => Number(kv?.mod_revision ?? 0) === expected[index]);
    await this.waitUntil(
      () =>
        read.every((key, index) => {
          const kv = current[index];
          if (kv !== undefined) return this.mirror.appliedRevision >= Number(kv.mod_revision);
          // Absent in etcd: caught up once memory has no such key, or a later one.
          const held = this.mirror.revisionOf(key);
          return held === undefined || held > revision;
        }),
      directoryWatchApplyTimeoutMs,
      'the directory watch to bring changes other routers made',
    );
    return fenced ? 'fenced' : 'changed';
  }

  /**
   * Waits until every live router's presence has seen `revision` (a dead
   * one's lease expires meanwhile). Used after a change other routers must
   * have applied before this one acts on it or answers: a growth's
   * activation, a clear, a delete, a pair going out of sync. When it gives
   * up (UNAVAILABLE, the change stands), a live router that has not applied
   * the change has stopped vouching for its copy: the wait outlasts the
   * bound on its proof of currency (RouterPresence.acknowledgementWaitMs).
   */
  awaitAcknowledged(revision: number, what: string, waitMs: number): Promise<void> {
    return this.waitUntil(
      () => this.mirror.unacknowledged(revision).length === 0,
      waitMs,
      () => `router(s) ${this.mirror.unacknowledged(revision).join(', ')} to acknowledge ${what}`,
    );
  }

  /** Resolves once `ready` holds (checked as the watch applies changes); UNAVAILABLE after timeoutMs. */
  waitUntil(ready: () => boolean, timeoutMs: number, what: string | (() => string)): Promise<void> {
    if (ready()) return Promise.resolve();
    if (this.closed) return Promise.reject(new TallyError(ErrorCode.unavailable, 'the directory is closed'));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        ready,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          const description = typeof what === 'string' ? what : what();
          reject(new TallyError(ErrorCode.unavailable, `the directory store (etcd): waited ${timeoutMs} ms for ${description}`));
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /** After memory changed: resolves the waits it satisfies. */
  settleWaiters(): void {
    for (const waiter of this.waiters) {
      if (!waiter.ready()) continue;
      this.waiters.delete(waiter);
      clearTimeout(waiter.timer);
      waiter.resolve();
    }
  }

  /** Fails every wait (the directory is closing) and every later one. */
  close(error: Error): void {
    this.closed = true;
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.waiters.clear();
  }
}
