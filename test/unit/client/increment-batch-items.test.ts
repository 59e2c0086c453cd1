// incrementBatch reads the caller's items when it is called: a caller that
// reuses its items array (as a load generator does) may change it as soon as
// the call returns its promise, and the batch sent is still the one given.
// The answers come back as { applied, shard } per item.
import { afterEach, describe, expect, it } from 'vitest';
import { createTallyClient, type IncrementItem, type TallyClient } from '../../../src/client/index.ts';
import { startFakeRouter, type FakeRouter } from '../../helpers/fake-router.ts';

describe('client incrementBatch items', () => {
  let router: FakeRouter | undefined;
  let client: TallyClient | undefined;
  afterEach(async () => {
    client?.close();
    await router?.stop();
  });

  it('client: items changed after incrementBatch returns its promise do not change the batch sent', async () => {
    router = await startFakeRouter({ incrementBatch: (items) => ({ appliedIndexes: items.map((_, index) => index) }) });
    client = createTallyClient({ address: router.address, incrementStream: false });
    const items: IncrementItem[] = [
      { counter: 'reused:a', amount: 2, idempotencyKey: null },
      { counter: 'reused:b', amount: 3, idempotencyKey: null },
    ];
    const pending = client.incrementBatch(items);
    items[0]!.counter = 'reused:changed';
    items[1]!.amount = 1_000;
    items.length = 1;
    const results = await pending;
    expect(results).toEqual([
      { applied: true, shard: 0 },
      { applied: true, shard: 0 },
    ]);
    expect(Object.fromEntries(router.totals)).toEqual({ 'reused:a': 2n, 'reused:b': 3n });
  });
});
