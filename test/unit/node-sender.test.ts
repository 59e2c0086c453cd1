// Unit tests for NodeSender's queue, with a node that answers only when the
// test says so: a flood of callers fills the queue to nodeQueueItemsMax, the
// next is refused at once, and every queued caller is answered, in order, in
// calls no larger than applyItemsPerCallMax.
import { describe, expect, it } from 'vitest';
import { connectivityState, type ServiceError } from '@grpc/grpc-js';
import { applyItemsPerCallMax, nodeCallsInFlightMax, nodeQueueItemsMax, type shardV1 } from '../../src/common/index.ts';
import { NodeSender } from '../../src/router/nodes/node-sender.ts';
import { rejection } from '../helpers/rejection.ts';

type ApplyCallback = (error: ServiceError | null, response?: shardV1.ApplyResponse__Output) => void;

/** A node whose Apply calls wait until answer() is called. */
function heldNode() {
  const calls: { request: shardV1.ApplyRequest; callback: ApplyCallback }[] = [];
  const rpc = {
    getChannel: () => ({ getConnectivityState: () => connectivityState.READY }),
    Apply: (request: shardV1.ApplyRequest, _options: unknown, callback: ApplyCallback) => calls.push({ request, callback }),
  } as unknown as shardV1.ShardNodeClient;
  return {
    rpc,
    calls,
    /** Answers the oldest unanswered call: every group applied. */
    answerNext(): void {
      const call = calls.find((candidate) => !(candidate as { answered?: boolean }).answered)!;
      (call as { answered?: boolean }).answered = true;
      const results = (call.request.groups ?? []).map((group) => ({
        code: 0,
        message: '',
        applied: (group.items ?? []).map(() => true),
        changed: [],
      }));
      call.callback(null, { results } as unknown as shardV1.ApplyResponse__Output);
    },
  };
}

const item = (shardId: number) => ({ shardId, amount: 1, idempotencyKey: Buffer.alloc(0) });

describe('node sender', () => {
  it(
    'node sender: a flood of nodeQueueItemsMax one-item callers queues them all, refuses the next with RESOURCE_EXHAUSTED, and answers every one in order',
    { timeout: 60_000 },
    async () => {
      const node = heldNode();
      const sender = new NodeSender('node:1', node.rpc, 1_000, () => 1n, { onCall: () => undefined });
      const answered: number[] = [];
      // The first calls leave at once and hold nodeCallsInFlightMax calls' worth in flight.
      const inFlightItems = nodeCallsInFlightMax;
      const callerCount = nodeQueueItemsMax + inFlightItems;
      const pending: Promise<void>[] = [];
      for (let index = 0; index < callerCount; index++) {
        pending.push(sender.send([item(index)]).then(() => void answered.push(index)));
      }
      expect(node.calls).toHaveLength(nodeCallsInFlightMax);
      // Full: the next caller is refused at once, nothing queued for it.
      expect((await rejection(sender.send([item(-1)]))).code).toBe('resource_exhausted');
      let itemsSent = 0;
      let largestCall = 0;
      while (answered.length < callerCount) {
        node.answerNext();
        await Promise.resolve();
        await new Promise((resolve) => setImmediate(resolve));
      }
      for (const call of node.calls) {
        const items = (call.request.groups ?? []).reduce((sum, group) => sum + (group.items?.length ?? 0), 0);
        itemsSent += items;
        largestCall = Math.max(largestCall, items);
      }
      await Promise.all(pending);
      expect(itemsSent).toBe(callerCount);
      expect(largestCall).toBeLessThanOrEqual(applyItemsPerCallMax);
      // Coalesced: a few calls, not one per caller.
      expect(node.calls.length).toBeLessThanOrEqual(nodeCallsInFlightMax + Math.ceil(nodeQueueItemsMax / applyItemsPerCallMax) + 1);
      expect(answered).toEqual(Array.from({ length: callerCount }, (_, index) => index));
      // Drained: the queue takes callers again.
      const after = sender.send([item(0)]);
      node.answerNext();
      await after;
    },
  );
});
