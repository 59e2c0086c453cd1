// Who may call what. With no tokens configured (the loopback default)
// everything is open. With tokens, CounterService needs the client token
// (or the admin one) and AdminService needs the admin token: a credential
// distinct from the one for increments and reads. Compared in constant time.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Metadata, ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { ErrorCode, TallyError, toServiceError } from '../common/index.ts';

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

function presented(metadata: Metadata): Buffer | undefined {
  const header = metadata.get('authorization')[0];
  if (typeof header !== 'string' || !header.startsWith('Bearer ')) return undefined;
  return digest(header.slice('Bearer '.length).trim());
}

function matches(token: Buffer | undefined, expected: Buffer | undefined): boolean {
  return token !== undefined && expected !== undefined && timingSafeEqual(token, expected);
}

/** Throws UNAUTHENTICATED (no or unknown credential) or PERMISSION_DENIED (a credential of the wrong role). */
export function authorize(tokens: Tokens, metadata: Metadata, need: 'client' | 'admin'): void {
  if (tokens.admin === undefined && tokens.client === undefined) return;
  const token = presented(metadata);
  const isAdmin = matches(token, tokens.admin);
  const isClient = matches(token, tokens.client);
  if (need === 'admin') {
    if (isAdmin) return;
    if (isClient) throw new TallyError(ErrorCode.permissionDenied, 'this credential may not call AdminService');
    throw new TallyError(ErrorCode.unauthenticated, 'AdminService needs the admin token (authorization: Bearer ...)');
  }
  if (tokens.client === undefined || isClient || isAdmin) return;
  throw new TallyError(ErrorCode.unauthenticated, 'CounterService needs a token (authorization: Bearer ...)');
}

type Handler = (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => void;

/** Every handler of a service, checked first: a refused call changes nothing. */
export function withAuth<Service extends object>(service: Service, tokens: Tokens, need: 'client' | 'admin'): Service {
  const guarded: Record<string, Handler> = {};
  for (const [name, handler] of Object.entries(service) as [string, Handler][]) {
    guarded[name] = (call, callback) => {
      try {
        authorize(tokens, call.metadata, need);
      } catch (error) {
        callback(toServiceError(error));
        return;
      }
      handler(call, callback);
    };
  }
  return guarded as Service;
}
