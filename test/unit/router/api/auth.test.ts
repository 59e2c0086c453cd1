// Who may call what, decided on metadata alone (the router's interceptor runs
// this before a message is read). The interceptor itself is attacked with real
// floods in test/integration/call-guards.test.ts.
import { describe, expect, it } from 'vitest';
import { Metadata, status } from '@grpc/grpc-js';
import { refusalOf, tokensOf } from '../../../../src/router/api/auth.ts';

const admin = 'admin-token-0123456789';
const client = 'client-token-0123456789';
const increment = '/counter.v1.CounterService/Increment';
const describeCounter = '/counter.v1.AdminService/Describe';
const health = '/grpc.health.v1.Health/Check';
const reflection = '/grpc.reflection.v1.ServerReflection/ServerReflectionInfo';

function bearer(token: string | undefined): Metadata {
  const metadata = new Metadata();
  if (token !== undefined) metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

describe('auth', () => {
  it('without tokens everything is open', () => {
    const tokens = tokensOf(undefined, undefined);
    for (const path of [increment, describeCounter, health, reflection]) expect(refusalOf(tokens, path, bearer(undefined))).toBeUndefined();
  });

  it('with both tokens, CounterService takes either, AdminService only the admin one; health stays open', () => {
    const tokens = tokensOf(admin, client);
    expect(refusalOf(tokens, increment, bearer(undefined))?.code).toBe(status.UNAUTHENTICATED);
    expect(refusalOf(tokens, increment, bearer('a-wrong-token-of-length'))?.code).toBe(status.UNAUTHENTICATED);
    expect(refusalOf(tokens, increment, bearer(client))).toBeUndefined();
    expect(refusalOf(tokens, increment, bearer(admin))).toBeUndefined();
    expect(refusalOf(tokens, describeCounter, bearer(client))?.code).toBe(status.PERMISSION_DENIED);
    expect(refusalOf(tokens, describeCounter, bearer(undefined))?.code).toBe(status.UNAUTHENTICATED);
    expect(refusalOf(tokens, describeCounter, bearer(admin))).toBeUndefined();
    expect(refusalOf(tokens, reflection, bearer(undefined))?.code).toBe(status.UNAUTHENTICATED);
    expect(refusalOf(tokens, health, bearer(undefined))).toBeUndefined();
  });

  it('with only the admin token set, CounterService is not open: it needs the admin token', () => {
    const tokens = tokensOf(admin, undefined);
    expect(refusalOf(tokens, increment, bearer(undefined))?.code).toBe(status.UNAUTHENTICATED);
    expect(refusalOf(tokens, increment, bearer(admin))).toBeUndefined();
  });

  it('a header that is not "Bearer <token>" is no credential', () => {
    const tokens = tokensOf(admin, client);
    const metadata = new Metadata();
    metadata.set('authorization', client);
    expect(refusalOf(tokens, increment, metadata)?.code).toBe(status.UNAUTHENTICATED);
  });
});
