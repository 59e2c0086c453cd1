// RegionLink is for the routers of peer regions: it needs the admin token,
// as AdminService does; the client token and a wrong token are refused with
// a status that names the service.
import { describe, expect, it } from 'vitest';
import { Metadata, status } from '@grpc/grpc-js';
import { refusalOf, tokensOf } from '../../../src/router/api/auth.ts';

const admin = 'admin-token-0123456789';
const client = 'client-token-0123456789';
const exchange = '/tally.region.v1.RegionLink/Exchange';

function bearer(token: string | undefined): Metadata {
  const metadata = new Metadata();
  if (token !== undefined) metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

describe('region link auth', () => {
  it('auth: RegionLink takes the admin token only; the client token is PERMISSION_DENIED, none or a wrong one UNAUTHENTICATED', () => {
    const tokens = tokensOf(admin, client);
    expect(refusalOf(tokens, exchange, bearer(admin))).toBeUndefined();
    expect(refusalOf(tokens, exchange, bearer(client))).toMatchObject({
      code: status.PERMISSION_DENIED,
      details: 'this credential may not call RegionLink',
    });
    for (const token of [undefined, 'another-admin-token-of-a-peer'])
      expect(refusalOf(tokens, exchange, bearer(token))).toMatchObject({
        code: status.UNAUTHENTICATED,
        details: expect.stringContaining('RegionLink needs the admin token'),
      });
  });

  it('auth: without tokens RegionLink is open, as every service (loopback or --allow-unauthenticated)', () => {
    expect(refusalOf(tokensOf(undefined, undefined), exchange, bearer(undefined))).toBeUndefined();
  });
});
