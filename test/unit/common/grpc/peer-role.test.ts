// The role a certificate states (its spiffe://tally/ URI SAN) and who may call
// each ShardNode method. The real certificates and processes are in
// test/integration/node-certificates.test.ts.
import type { PeerCertificate } from 'node:tls';
import { describe, expect, it } from 'vitest';
import {
  checkServerRole,
  peerRoleOf,
  shardNodeCallerRoles,
  shardNodeServiceDefinition,
  subjectAltNames,
} from '../../../../src/common/index.ts';

const withSans = (subjectaltname: string): PeerCertificate => ({ subject: { CN: 'x' }, subjectaltname }) as unknown as PeerCertificate;

describe('peer role', () => {
  it("subjectAltNames: reads Node's format, JSON-quoted values included", () => {
    expect(subjectAltNames('URI:spiffe://tally/node/node-0a, DNS:localhost, IP Address:127.0.0.1')).toEqual([
      { type: 'URI', value: 'spiffe://tally/node/node-0a' },
      { type: 'DNS', value: 'localhost' },
      { type: 'IP Address', value: '127.0.0.1' },
    ]);
    expect(subjectAltNames('URI:"spiffe://x, URI:spiffe://tally/router", DNS:a')).toEqual([
      { type: 'URI', value: 'spiffe://x, URI:spiffe://tally/router' },
      { type: 'DNS', value: 'a' },
    ]);
    expect(subjectAltNames(undefined)).toEqual([]);
    expect(subjectAltNames('')).toEqual([]);
    // Anything that does not parse is no names at all, never a partial list.
    expect(subjectAltNames('URI:spiffe://tally/router, garbage')).toEqual([]);
    expect(subjectAltNames('URI:"unterminated')).toEqual([]);
  });

  it('the one spiffe://tally/<role> URI; none, unknown or several roles is no role', () => {
    expect(peerRoleOf(withSans('URI:spiffe://tally/router, DNS:router'))).toBe('router');
    expect(peerRoleOf(withSans('DNS:node-0a, URI:spiffe://tally/node/node-0a'))).toBe('node');
    expect(peerRoleOf(withSans('URI:spiffe://tally/client'))).toBe('client');
    // A URI that merely contains a role, inside a quoted value, is not one.
    expect(peerRoleOf(withSans('URI:"spiffe://x, URI:spiffe://tally/router"'))).toBeUndefined();
    expect(peerRoleOf(withSans('URI:spiffe://tally/router, URI:spiffe://tally/client'))).toBeUndefined();
    expect(peerRoleOf(withSans('URI:spiffe://tally/node/a, URI:spiffe://tally/node/b'))).toBe('node');
    expect(peerRoleOf(withSans('URI:spiffe://tally/admin'))).toBeUndefined();
    expect(peerRoleOf(withSans('URI:spiffe://tally/'))).toBeUndefined();
    expect(peerRoleOf(withSans('URI:spiffe://other/router'))).toBeUndefined();
    expect(peerRoleOf(withSans('DNS:router'))).toBeUndefined();
    expect(peerRoleOf(withSans('DNS:spiffe://tally/router'))).toBeUndefined();
    expect(peerRoleOf(undefined)).toBeUndefined();
  });

  it('shardNodeCallerRoles: every ShardNode method has its callers, and only the router and nodes are among them', () => {
    const methods = Object.values(shardNodeServiceDefinition).map((method) => method.path.slice(method.path.lastIndexOf('/') + 1));
    expect(Object.keys(shardNodeCallerRoles).sort()).toEqual(methods.sort());
    for (const [method, roles] of Object.entries(shardNodeCallerRoles)) {
      expect(roles.length, method).toBeGreaterThan(0);
      expect(roles, method).not.toContain('client');
    }
    // Replication is node to node; everything else comes from the router.
    expect(shardNodeCallerRoles.AppendEntries).toEqual(['node']);
    expect(shardNodeCallerRoles.InstallSnapshot).toEqual(['node']);
    expect(shardNodeCallerRoles.Apply).toEqual(['router']);
    expect(shardNodeCallerRoles.SetRole).toEqual(['router']);
  });

  it('checkServerRole: the host name must match and the certificate must state the role', () => {
    const check = checkServerRole('node');
    expect(check('localhost', withSans('URI:spiffe://tally/node/node-0a, DNS:localhost'))).toBeUndefined();
    expect(check('localhost', withSans('URI:spiffe://tally/router, DNS:localhost'))?.message).toMatch(
      /^the server at localhost is not a node: its certificate is a router certificate/,
    );
    expect(check('localhost', withSans('DNS:localhost'))?.message).toMatch(/states no single role/);
    expect(check('elsewhere', withSans('URI:spiffe://tally/node/node-0a, DNS:localhost'))?.message).toMatch(/elsewhere/);
  });
});
