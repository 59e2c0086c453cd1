// Unit tests for NodeSender's queue, with a node that answers only when the
// test says so: a flood of callers fills the queue to nodeQueueItemsMax, the
// next is refused at once, and every queued caller is answered, in order, in
// calls no larger than applyItemsPerCallMax.
import { describe, expect, it } from 'vitest';
import { connectivityState, status, type ServiceError } from '@grpc/grpc-js';
import { applyItemsPerCallMax, nodeCallsInFlightMax, nodeQueueItemsMax, type shardV1 } from '../../../../src/common/index.ts';
import { NodeSender } from '../../../../src/router/nodes/node-sender.ts';
import { FrameStream, type FrameCallHandlers } from '../../../../src/router/nodes/frame-stream.ts';
import { rejection } from '../../../helpers/rejection.ts';

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
    'a flood of nodeQueueItemsMax one-item callers queues them all, refuses the next with RESOURCE_EXHAUSTED, and answers every one in order',
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

describe('node sender over a stream', () => {
  /** A FrameStream over a fake call whose frames wait for the test; endWith ends the call with a status. */
  function streamedNode() {
    const node = heldNode();
    const frames: { seq: number; request: shardV1.ApplyRequest }[] = [];
    let handlers: FrameCallHandlers<shardV1.ApplyResponse__Output> | undefined;
    let opened = 0;
    const stream = new FrameStream<shardV1.ApplyRequest, shardV1.ApplyResponse__Output>(
      'node:1',
      (given) => {
        handlers = given;
        opened++;
        return { write: (frame) => void frames.push(frame), cancel: () => undefined };
      },
      { framesInFlightMax: nodeCallsInFlightMax, bytesInFlightMax: 1 << 20, queuedFramesMax: 100 },
    );
    const sender = new NodeSender('node:1', node.rpc, 1_000, () => 1n, { onCall: () => undefined }, stream);
    const answer = (frame: { seq: number; request: shardV1.ApplyRequest }): void => {
      const results = (frame.request.groups ?? []).map((group) => ({
        code: 0,
        message: '',
        applied: (group.items ?? []).map(() => true),
        changed: [],
      }));
      handlers!.onAnswer({ seq: frame.seq, response: { results, lsn: '1' } as unknown as shardV1.ApplyResponse__Output, error: null });
    };
    return { node, frames, sender, answer, endWith: (code: number) => handlers!.onEnd({ code, details: 'ended' }), opened: () => opened };
  }

  it('over a stream, at most nodeCallsInFlightMax frames leave; callers queued meanwhile leave together in the next frame', async () => {
    const { node, frames, sender, answer, opened } = streamedNode();
    const pending = Array.from({ length: 10 }, (_, index) => sender.send([item(index)]));
    expect(frames).toHaveLength(nodeCallsInFlightMax);
    expect(node.calls).toHaveLength(0);
    answer(frames[0]!);
    await pending[0];
    // The 8 callers queued behind the two frames leave in one.
    expect(frames).toHaveLength(3);
    expect(frames[2]!.request.groups).toHaveLength(8);
    answer(frames[1]!);
    answer(frames[2]!);
    await Promise.all(pending);
    expect(opened()).toBe(1);
  });

  it('a node that serves no stream (UNIMPLEMENTED) gets the frame as a unary Apply, and every later call unary', async () => {
    const { node, frames, sender, endWith } = streamedNode();
    const first = sender.send([item(1)]);
    expect(frames).toHaveLength(1);
    endWith(status.UNIMPLEMENTED);
    await new Promise((resolve) => setImmediate(resolve));
    expect(node.calls).toHaveLength(1);
    node.answerNext();
    await expect(first).resolves.toMatchObject({ code: 0 });
    const second = sender.send([item(2)]);
    expect(node.calls).toHaveLength(2);
    node.answerNext();
    await second;
    expect(frames).toHaveLength(1);
  });

  it('a stream that breaks with frames in flight fails their callers UNAVAILABLE with an unknown outcome, never not-applied', async () => {
    const { sender, endWith } = streamedNode();
    const callers = [sender.send([item(1)]), sender.send([item(2)]), sender.send([item(3)])].map((call) => rejection(call));
    endWith(status.UNAVAILABLE);
    for (const error of await Promise.all(callers)) {
      expect(error.code).toBe('unavailable');
      expect(error.certainlyNotApplied).toBe(false);
    }
  });
});
