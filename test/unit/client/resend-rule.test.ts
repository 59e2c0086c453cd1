// Which failed calls a client with several routers may send again, and where
// (resend-rule.ts), the router order with its back-off (router-rotation.ts)
// on an injected clock, and the address checks. The channels, the attempt
// loop and the coalescer are tested against real routers
// (test/integration/router-addresses.test.ts, test/chaos/router-loss.test.ts).
import { describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { resendAfter, type CallClass } from '../../../src/client/connection/resend-rule.ts';
import { RouterRotation } from '../../../src/client/connection/router-rotation.ts';
import { parseRouterList, routerAddressesOf } from '../../../src/client/connection/router-addresses.ts';
import { routerAddressesMax, routerAvoidMsMax, routerAvoidMsMin } from '../../../src/wire/index.ts';
import { codeOf } from '../../helpers/rejection.ts';

const classes: CallClass[] = ['read', 'keyed', 'unkeyed', 'admin'];
const everyStatus = Object.values(status).filter((value): value is number => typeof value === 'number' && value !== status.OK);

describe('resend rule', () => {
  it('a call never handed to any router may move to another, whatever it is and whatever grpc-js would have said', () => {
    for (const callClass of classes)
      for (const grpcCode of everyStatus) expect(resendAfter(callClass, { sent: false, grpcCode }), callClass).toBe('anotherRouter');
  });

  it('an unkeyed write or an admin call that may have reached a router is never sent again', () => {
    for (const callClass of ['unkeyed', 'admin'] as const)
      for (const grpcCode of everyStatus)
        expect(resendAfter(callClass, { sent: true, grpcCode }), `${callClass} ${status[grpcCode]}`).toBe('no');
  });

  it('after UNAVAILABLE or DEADLINE_EXCEEDED a keyed write goes again after a back-off, a read goes to a router not yet tried', () => {
    for (const grpcCode of [status.UNAVAILABLE, status.DEADLINE_EXCEEDED]) {
      expect(resendAfter('keyed', { sent: true, grpcCode })).toBe('again');
      expect(resendAfter('read', { sent: true, grpcCode })).toBe('anotherRouter');
    }
  });

  it('a write the router certainly did not apply (NOT_APPLIED) goes again, keyed or not, when unavailable or refused with a retry hint', () => {
    for (const callClass of ['keyed', 'unkeyed'] as const) {
      expect(resendAfter(callClass, { sent: true, grpcCode: status.UNAVAILABLE, notApplied: true })).toBe('again');
      expect(resendAfter(callClass, { sent: true, grpcCode: status.RESOURCE_EXHAUSTED, notApplied: true, retryAfterMs: 100 })).toBe(
        'again',
      );
      // Refused for what it is: the same request gets the same answer.
      expect(resendAfter(callClass, { sent: true, grpcCode: status.INVALID_ARGUMENT, notApplied: true })).toBe('no');
      expect(resendAfter(callClass, { sent: true, grpcCode: status.RESOURCE_EXHAUSTED, notApplied: true })).toBe('no');
    }
    // Only the router's word makes an unkeyed repeat safe: unknown stays unknown.
    expect(resendAfter('unkeyed', { sent: true, grpcCode: status.UNAVAILABLE, notApplied: false })).toBe('no');
    expect(resendAfter('unkeyed', { sent: true, grpcCode: status.RESOURCE_EXHAUSTED, retryAfterMs: 100 })).toBe('no');
    // Admin calls and reads keep their own rules.
    expect(resendAfter('admin', { sent: true, grpcCode: status.UNAVAILABLE, notApplied: true })).toBe('no');
    expect(resendAfter('read', { sent: true, grpcCode: status.UNAVAILABLE, notApplied: true })).toBe('anotherRouter');
  });

  it("any other status is the router's answer, for every call", () => {
    const answers = everyStatus.filter((code) => code !== status.UNAVAILABLE && code !== status.DEADLINE_EXCEEDED);
    expect(answers).toContain(status.RESOURCE_EXHAUSTED);
    expect(answers).toContain(status.CANCELLED);
    for (const callClass of classes)
      for (const grpcCode of answers)
        expect(resendAfter(callClass, { sent: true, grpcCode }), `${callClass} ${status[grpcCode]}`).toBe('no');
  });
});

describe('router rotation', () => {
  function rotation(routerCount: number, start = 0) {
    let nowMs = 1_000_000;
    const rotation = new RouterRotation(
      routerCount,
      () => nowMs,
      () => start / routerCount,
    );
    return { rotation, advance: (ms: number) => (nowMs += ms) };
  }

  it('each call starts one router further on, and tries every router once', () => {
    const { rotation: three } = rotation(3, 1);
    expect([three.order(), three.order(), three.order(), three.order()]).toEqual([
      [1, 2, 0],
      [2, 0, 1],
      [0, 1, 2],
      [1, 2, 0],
    ]);
    expect(rotation(1).rotation.order()).toEqual([0]);
  });

  it('a failed router goes last until its back-off ends, then takes its turns again', () => {
    const { rotation: two, advance } = rotation(2);
    two.failed(0);
    expect(two.avoided(0)).toBe(true);
    expect([two.order(), two.order()]).toEqual([
      [1, 0],
      [1, 0],
    ]);
    advance(routerAvoidMsMin - 1);
    expect(two.order()[0]).toBe(1);
    advance(1);
    expect(two.avoided(0)).toBe(false);
    expect([two.order(), two.order()].map((order) => order[0]).sort()).toEqual([0, 1]);
  });

  it('the back-off doubles per failure up to its ceiling, failures while avoided do not count, an answer forgets them', () => {
    const { rotation: two, advance } = rotation(2);
    const backoffs: number[] = [];
    for (let failure = 0; failure < 6; failure++) {
      two.failed(0);
      // The calls in flight when it died fail together: one failure.
      two.failed(0);
      let waitedMs = 0;
      while (two.avoided(0)) {
        advance(100);
        waitedMs += 100;
      }
      backoffs.push(waitedMs);
    }
    expect(backoffs).toEqual([1_000, 2_000, 4_000, routerAvoidMsMax, routerAvoidMsMax, routerAvoidMsMax]);
    two.answered(0);
    two.failed(0);
    advance(routerAvoidMsMin);
    expect(two.avoided(0)).toBe(false);
  });

  it('when every router is avoided, a call still tries them all, the one back soonest first', () => {
    const { rotation: three, advance } = rotation(3);
    three.failed(2);
    advance(300);
    three.failed(0);
    advance(300);
    three.failed(1);
    expect(three.order()).toEqual([2, 0, 1]);
  });
});

describe('router addresses', () => {
  it('address or addresses, exactly one; a list holds distinct, non-empty addresses', () => {
    expect(routerAddressesOf({ address: '127.0.0.1:50051' })).toEqual(['127.0.0.1:50051']);
    expect(routerAddressesOf({ addresses: ['a:1', 'b:2'] })).toEqual(['a:1', 'b:2']);
    const bad: { address?: unknown; addresses?: unknown }[] = [
      {},
      { address: 'a:1', addresses: ['b:2'] },
      { address: 'a:1,b:2' },
      { address: '' },
      { addresses: [] },
      { addresses: 'a:1' },
      { addresses: ['a:1', 'a:1'] },
      { addresses: ['a:1', ' '] },
      { addresses: ['a:1,b:2'] },
      { addresses: [7] },
      { addresses: Array.from({ length: routerAddressesMax + 1 }, (_, index) => `h:${index + 1}`) },
    ];
    for (const options of bad)
      expect(
        codeOf(() => routerAddressesOf(options)),
        JSON.stringify(options),
      ).toBe('invalid_argument');
  });

  it('--router takes host:port entries separated by commas and names the flag in its error', () => {
    expect(parseRouterList('127.0.0.1:1,[::1]:2, b.example:3,unix:/tmp/s', '--router')).toEqual([
      '127.0.0.1:1',
      '[::1]:2',
      'b.example:3',
      'unix:/tmp/s',
    ]);
    const cases: [string, RegExp][] = [
      ['', /^--router "" has an empty entry/],
      ['a:1,', /^--router "a:1," has an empty entry/],
      ['a:1,,b:2', /has an empty entry/],
      ['localhost', /^--router entry "localhost" is not host:port/],
      [':50051', /is not host:port/],
      ['a:0', /is not host:port/],
      ['a:65536', /is not host:port/],
      ['a:1,a:1', /^--router names a:1 twice$/],
      ['a:1;b:2', /^--router entry "a:1;b:2" is not host:port/],
      ['::1:2', /is not host:port/],
    ];
    for (const [text, message] of cases) expect(() => parseRouterList(text, '--router'), text).toThrow(message);
  });
});
