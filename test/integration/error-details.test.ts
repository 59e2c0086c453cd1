// google.rpc details from a real router (docs/clients.md, "Errors"): a
// refused call carries ErrorInfo NOT_APPLIED in domain tally.counter.v1, read
// off the raw trailer with the vendored protos and through the client; a busy
// refusal carries RetryInfo too; an increment whose node stopped answering
// mid-write is OUTCOME_UNKNOWN; one that no live node could take is
// UNAVAILABLE yet NOT_APPLIED (both nodes of its pair killed).
import path from 'node:path';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, status, type ServiceError } from '@grpc/grpc-js';
import { CounterServiceClient } from '../../src/common/index.ts';
import { createTallyClient, type TallyClient, type TallyError } from '../../src/client/index.ts';
import { pause, startCluster, waitFor, type TestCluster } from '../helpers/cluster.ts';
import { rejection } from '../helpers/rejection.ts';

const protoDir = path.resolve(import.meta.dirname, '../../proto');
const vendored = protobuf.loadSync([path.join(protoDir, 'google/rpc/status.proto'), path.join(protoDir, 'google/rpc/error_details.proto')]);

function errorInfoOf(error: ServiceError): { reason: string; domain: string } {
  const bytes = error.metadata.get('grpc-status-details-bin')[0] as Buffer;
  const Status = vendored.lookupType('google.rpc.Status');
  const decoded = Status.toObject(Status.decode(bytes)) as { code: number; details: { type_url: string; value: Uint8Array }[] };
  expect(decoded.code).toBe(error.code);
  const any = decoded.details.find((detail) => detail.type_url === 'type.googleapis.com/google.rpc.ErrorInfo')!;
  const ErrorInfo = vendored.lookupType('google.rpc.ErrorInfo');
  return ErrorInfo.toObject(ErrorInfo.decode(any.value)) as { reason: string; domain: string };
}

describe('error details from a router', () => {
  let tc: TestCluster;
  let client: TallyClient;

  beforeAll(async () => {
    // No failover while a primary is paused or dead: the statuses come from the write path alone.
    tc = await startCluster({
      pairs: 1,
      routerArgs: [
        '--calls-in-flight-max',
        '2',
        '--node-call-timeout-ms',
        '1000',
        '--failover-timeout-ms',
        '600000',
        '--failover-wait-ms',
        '300',
      ],
    });
    client = createTallyClient({ address: tc.cluster.routerAddress, deadlineMs: 10_000 });
    await client.increment('held', 1n, { idempotencyKey: null });
  });

  afterAll(async () => {
    client?.close();
    await tc?.stop();
  });

  it('a refused increment carries ErrorInfo NOT_APPLIED in domain tally.counter.v1, on the wire and on TallyError', async () => {
    const raw = new CounterServiceClient(tc.cluster.routerAddress, credentials.createInsecure());
    const error = await new Promise<ServiceError>((resolve) =>
      raw.Increment({ counter: 'c', amount: '0' }, (failure) => resolve(failure!)),
    );
    raw.close();
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(errorInfoOf(error)).toEqual({ reason: 'NOT_APPLIED', domain: 'tally.counter.v1' });
    const refused = await rejection(client.increment('', 1n));
    expect(refused.reason).toBe('NOT_APPLIED');
    expect(refused.certainlyNotApplied).toBe(true);
  });

  it('busy is NOT_APPLIED with RetryInfo; an increment whose node stopped answering is OUTCOME_UNKNOWN', async () => {
    const primary = tc.cluster.node(0, 'primary');
    primary.process.signal('SIGSTOP');
    try {
      // Two calls wait on the paused node (the router's cap); the third is refused at admission.
      const held = [0, 1].map(() => client.increment('held', 1n, { idempotencyKey: null }).catch((error: TallyError) => error));
      const busy = await waitFor(
        async () => {
          // A deadline shorter than the RetryInfo delay: the client (which honours it) cannot retry, so the refusal shows.
          const error = await client
            .increment('held', 1n, { idempotencyKey: null, deadlineMs: 80 })
            .catch((failure: TallyError) => failure);
          return typeof error === 'object' && 'grpcCode' in error && error.grpcCode === status.RESOURCE_EXHAUSTED ? error : undefined;
        },
        { timeoutMs: 3_000, what: 'a busy refusal' },
      );
      expect(busy.reason).toBe('NOT_APPLIED');
      expect(busy.retryAfterMs).toBe(100);
      const unknown = (await Promise.all(held)) as TallyError[];
      for (const error of unknown) {
        expect(error.grpcCode).toBe(status.UNAVAILABLE);
        expect(error.message).toMatch(/did not answer in time/);
        expect(error.reason).toBe('OUTCOME_UNKNOWN');
        expect(error.certainlyNotApplied).toBe(false);
      }
    } finally {
      primary.process.signal('SIGCONT');
    }
  });

  it('an increment no live node could take is UNAVAILABLE, NOT_APPLIED, with RetryInfo', { timeout: 30_000 }, async () => {
    // Both sides of the pair: no failover can give the counter a live shard.
    for (const role of ['primary', 'follower'] as const) await tc.cluster.node(0, role).process.stop('SIGKILL');
    // Once the router has seen the connections go, nothing is sent to the dead nodes: not applied, whatever the message.
    const seen: string[] = [];
    const error = await waitFor(
      async () => {
        const failure = await client.increment('held', 1n, { idempotencyKey: null }).catch((thrown: TallyError) => thrown);
        if (!('grpcCode' in failure)) {
          seen.push(`applied on shard ${failure.shard}`);
          return undefined;
        }
        seen.push(`${failure.reason}: ${failure.message}`);
        return failure.grpcCode === status.UNAVAILABLE && failure.reason === 'NOT_APPLIED' ? failure : undefined;
      },
      { timeoutMs: 20_000, what: 'a refusal with nothing sent' },
    ).catch((error: Error) => {
      throw new Error(`${error.message}; saw ${seen.slice(-3).join(' | ')}`);
    });
    expect(error.grpcCode).toBe(status.UNAVAILABLE);
    expect(error.reason).toBe('NOT_APPLIED');
    expect(error.retryAfterMs).toBe(1_000);

    // The client sends a write the router did not apply again, even without a
    // key (RetryInfo paced): once the pair is back it lands, and counts once.
    const before = (await client.read('resent', { consistency: 'exact' }).catch(() => ({ total: 0n }))).total;
    const resent = client.increment('resent', 7n, { idempotencyKey: null, deadlineMs: 25_000 });
    await pause(1_500);
    for (const role of ['primary', 'follower'] as const) await tc.cluster.node(0, role).process.start();
    expect((await resent).applied).toBe(true);
    await waitFor(async () => ((await client.read('resent', { consistency: 'exact' })).total === before + 7n ? true : undefined), {
      timeoutMs: 10_000,
      what: 'the resent increment in the exact total, once',
    });
  });
});
