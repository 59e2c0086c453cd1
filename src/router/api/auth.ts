// Who may call what, decided on a call's metadata before its message is read
// (an unauthenticated flood of 4 MiB messages costs the router headers, not
// decodes). With no tokens configured (the loopback default) everything is
// open. With any token set, CounterService needs the client or the admin
// token and AdminService the admin token: a credential distinct from the one
// for increments and reads. Health stays open for probes. Tokens are
// compared as sha256 digests in constant time.
import { createHash, timingSafeEqual } from 'node:crypto';
import { status, type Metadata } from '@grpc/grpc-js';
import type { Refusal } from '../../common/index.ts';

export interface Tokens {
  /** sha256 of each token: equal-length values for timingSafeEqual. */
  admin: Buffer | undefined;
  client: Buffer | undefined;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

export function tokensOf(admin: string | undefined, client: string | undefined): Tokens {
  return { admin: admin === undefined ? undefined : digest(admin), client: client === undefined ? undefined : digest(client) };
}

function presented(header: unknown): Buffer | undefined {
  if (typeof header !== 'string' || !header.startsWith('Bearer ')) return undefined;
  return digest(header.slice('Bearer '.length).trim());
}

function matches(token: Buffer | undefined, expected: Buffer | undefined): boolean {
  return token !== undefined && expected !== undefined && timingSafeEqual(token, expected);
}

const adminServicePrefix = '/counter.v1.AdminService/';
const healthServicePrefix = '/grpc.health.v1.Health/';
/** The routers of peer regions (docs/regions.md): admin credentials, as AdminService. */
const regionLinkPrefix = '/tally.region.v1.RegionLink/';

/** UNAUTHENTICATED (no or unknown credential) or PERMISSION_DENIED (a credential of the wrong role); undefined when allowed. */
export function refusalOf(tokens: Tokens, path: string, metadata: Metadata): Refusal | undefined {
  return refusalOfAuthorization(tokens, path, metadata.get('authorization')[0]);
}

/** refusalOf, from the authorization header's value (an HTTP request's; undefined when absent). */
export function refusalOfAuthorization(tokens: Tokens, path: string, authorization: unknown): Refusal | undefined {
  if (tokens.admin === undefined && tokens.client === undefined) return undefined;
  if (path.startsWith(healthServicePrefix)) return undefined;
  const token = presented(authorization);
  const isAdmin = matches(token, tokens.admin);
  if (path.startsWith(adminServicePrefix) || path.startsWith(regionLinkPrefix)) {
    const service = path.startsWith(adminServicePrefix) ? 'AdminService' : 'RegionLink';
    if (isAdmin) return undefined;
    if (matches(token, tokens.client)) return { code: status.PERMISSION_DENIED, details: `this credential may not call ${service}` };
    return { code: status.UNAUTHENTICATED, details: `${service} needs the admin token (authorization: Bearer ...)` };
  }
  if (isAdmin || matches(token, tokens.client)) return undefined;
  return { code: status.UNAUTHENTICATED, details: 'this service needs a token (authorization: Bearer ...)' };
}
