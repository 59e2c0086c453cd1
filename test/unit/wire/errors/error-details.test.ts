// google.rpc details on failed calls: the codec against the vendored
// proto/google/rpc files (loaded here with protobufjs, independently of the
// definitions the code carries), the reason a status gets when its sender set
// none, and the increment path's reason: NOT_APPLIED only when no group of
// the call was (or may have been) applied.
import path from 'node:path';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { type Metadata, status } from '@grpc/grpc-js';
import {
  ErrorCode,
  TallyError,
  fromServiceError,
  reasonOf,
  toServiceError,
  ErrorReason,
  decodeStatusDetails,
  errorDomain,
  statusDetailsKey,
} from '../../../../src/wire/index.ts';
import { SqliteDirectory as Directory } from '../../../../src/router/directory/sqlite/store.ts';
import { IncrementPath } from '../../../../src/router/write/increment-path.ts';
import { NotAppliedError } from '../../../../src/router/nodes/node-sender.ts';
import type { NodePool } from '../../../../src/router/nodes/node-pool.ts';
import { makeTempDir, removeTempDir } from '../../../helpers/temp-dir.ts';

const protoDir = path.resolve(import.meta.dirname, '../../../../proto');
const vendored = protobuf.loadSync([path.join(protoDir, 'google/rpc/status.proto'), path.join(protoDir, 'google/rpc/error_details.proto')]);

/** The trailer's google.rpc.Status, decoded with the vendored .proto files. */
function decodeWithVendored(bytes: Buffer): { code: number; message: string; errorInfo?: Record<string, unknown>; retryDelayMs?: number } {
  const statusMessage = vendored.lookupType('google.rpc.Status').toObject(vendored.lookupType('google.rpc.Status').decode(bytes)) as {
    code: number;
    message: string;
    details?: { type_url: string; value: Uint8Array }[];
  };
  const result: ReturnType<typeof decodeWithVendored> = { code: statusMessage.code, message: statusMessage.message };
  for (const any of statusMessage.details ?? []) {
    const typeName = any.type_url.split('/').pop()!;
    const type = vendored.lookupType(typeName);
    const value = type.toObject(type.decode(any.value), { longs: Number }) as Record<string, unknown>;
    if (typeName === 'google.rpc.ErrorInfo') result.errorInfo = value;
    if (typeName === 'google.rpc.RetryInfo') {
      const delay = value.retryDelay as { seconds?: number; nanos?: number };
      result.retryDelayMs = (delay.seconds ?? 0) * 1000 + (delay.nanos ?? 0) / 1e6;
    }
  }
  return result;
}

describe('error details', () => {
  it('a refusal carries a google.rpc.Status with ErrorInfo and RetryInfo that the vendored protos decode, and the client reads back', () => {
    const error = new TallyError(ErrorCode.resourceExhausted, 'busy', undefined, { retryAfterMs: 1_250 });
    const sent = toServiceError(error);
    const bytes = (sent.metadata as Metadata).get(statusDetailsKey)[0] as Buffer;
    const decoded = decodeWithVendored(bytes);
    expect(decoded).toEqual({
      code: status.RESOURCE_EXHAUSTED,
      message: 'busy',
      errorInfo: { reason: 'NOT_APPLIED', domain: errorDomain },
      retryDelayMs: 1_250,
    });
    const received = fromServiceError({ ...sent, message: 'x', name: 'Error' });
    expect(received.reason).toBe(ErrorReason.notApplied);
    expect(received.certainlyNotApplied).toBe(true);
    expect(received.retryAfterMs).toBe(1_250);
  });

  it('without a reason set: refusals are NOT_APPLIED, UNAVAILABLE/DEADLINE/INTERNAL are OUTCOME_UNKNOWN; a read is NOT_APPLIED whatever failed', () => {
    expect(reasonOf(status.INVALID_ARGUMENT)).toBe('NOT_APPLIED');
    expect(reasonOf(status.UNAUTHENTICATED)).toBe('NOT_APPLIED');
    expect(reasonOf(status.UNAVAILABLE)).toBe('OUTCOME_UNKNOWN');
    expect(reasonOf(status.DEADLINE_EXCEEDED)).toBe('OUTCOME_UNKNOWN');
    const bug = toServiceError(new Error('boom'));
    expect(decodeStatusDetails((bug.metadata as Metadata).get(statusDetailsKey)[0] as Buffer)?.reason).toBe('OUTCOME_UNKNOWN');
    const read = toServiceError(new TallyError(ErrorCode.unavailable, 'no copy'), true);
    expect(decodeStatusDetails((read.metadata as Metadata).get(statusDetailsKey)[0] as Buffer)?.reason).toBe('NOT_APPLIED');
    // A trailer that is no Status leaves the reason unset; the code still stands.
    expect(decodeStatusDetails(Buffer.from([0xff, 0xff, 0xff]))).toBeUndefined();
  });
});

describe('increment path reasons', () => {
  /** Two pairs; node p1 answers as `second` says, p0 applies. */
  async function failure(second: 'refuses' | 'times out', items: { counter: string }[]): Promise<TallyError> {
    const dataDir = makeTempDir('error-reasons');
    const directory = Directory.open(dataDir, [
      { primary: 'p0:1', follower: 'f0:1' },
      { primary: 'p1:1', follower: 'f1:1' },
    ]);
    const pool = {
      get: (address: string) => ({
        sender: {
          async sendGroup(group: { items: unknown[]; increments: unknown[] }) {
            if (address === 'p1:1') {
              if (second === 'refuses')
                return { code: status.OUT_OF_RANGE, message: 'total beyond int64', applied: [], packedRecordsApplied: 0 };
              throw new TallyError(ErrorCode.unavailable, 'node p1:1 did not answer in time', undefined, { reason: 'OUTCOME_UNKNOWN' });
            }
            return { code: status.OK, message: '', applied: group.items.map(() => true), packedRecordsApplied: group.increments.length };
          },
        },
      }),
      isKnownDown: () => false,
    } as unknown as NodePool;
    const incrementPath = new IncrementPath(directory, pool, 60_000, 0);
    try {
      // Counters a0 (pair 0) and b1 (pair 1): placement puts a new counter's one shard on the emptier pair.
      await directory.getOrCreateMany(['a0'], 'total');
      await directory.getOrCreateMany(['b1'], 'total');
      expect(directory.get('b1')!.shards[0]!.pairIndex).toBe(1);
      const valid = items.map((item) => ({ counter: item.counter, amount: 1, idempotencyKey: Buffer.alloc(0) }));
      return (await incrementPath.apply(valid).then(
        () => undefined,
        (error: unknown) => error,
      )) as TallyError;
    } finally {
      directory.close();
      removeTempDir(dataDir);
    }
  }

  it('router: a group refused whole with nothing else of the call applied is NOT_APPLIED', async () => {
    const error = await failure('refuses', [{ counter: 'b1' }]);
    expect(error.code).toBe(ErrorCode.outOfRange);
    expect(error.reason).toBe('NOT_APPLIED');
  });

  it('router: a batch one node applied and another refused is OUTCOME_UNKNOWN, as is a node that timed out', async () => {
    const partial = await failure('refuses', [{ counter: 'a0' }, { counter: 'b1' }]);
    expect(partial.code).toBe(ErrorCode.outOfRange);
    expect(partial.reason).toBe('OUTCOME_UNKNOWN');
    const timedOut = await failure('times out', [{ counter: 'b1' }]);
    expect(timedOut.reason).toBe('OUTCOME_UNKNOWN');
    expect(timedOut.certainlyNotApplied).toBe(false);
  });

  it('router: nothing sent anywhere (every node down past the failover wait) is UNAVAILABLE, NOT_APPLIED, with a retry delay', async () => {
    const dataDir = makeTempDir('error-reasons');
    const directory = Directory.open(dataDir, [{ primary: 'p0:1', follower: 'f0:1' }]);
    const pool = {
      get: () => ({
        sender: {
          async sendGroup() {
            throw new NotAppliedError(ErrorCode.unavailable, 'node down: nothing sent');
          },
        },
      }),
      isKnownDown: () => true,
    } as unknown as NodePool;
    try {
      const error = (await new IncrementPath(directory, pool, 60_000, 0)
        .apply([{ counter: 'c', amount: 1, idempotencyKey: Buffer.alloc(0) }])
        .catch((failed: unknown) => failed)) as TallyError;
      expect(error.code).toBe(ErrorCode.unavailable);
      expect(error.reason).toBe('NOT_APPLIED');
      expect(error.retryAfterMs).toBe(1_000);
    } finally {
      directory.close();
      removeTempDir(dataDir);
    }
  });
});
