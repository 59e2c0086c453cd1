// Which process a certificate belongs to, and who may call a node. Every leaf
// certificate names its role in a URI subject alternative name
// (spiffe://tally/router, spiffe://tally/node/<name>, spiffe://tally/client);
// a certificate from the cluster CA proves only membership, the role says
// what it may do. Must not trust anything a peer sends beyond its verified
// certificate.
import tls, { type PeerCertificate } from 'node:tls';
import { ServerInterceptingCall, status, type ServerInterceptor } from '@grpc/grpc-js';

export const peerRoles = ['router', 'node', 'client'] as const;
export type PeerRole = (typeof peerRoles)[number];

/** The URI SAN prefix of every role: spiffe://tally/<role>[/<name>]. */
export const peerRoleUriPrefix = 'spiffe://tally/';

/**
 * Who may call each ShardNode method. The router drives the nodes (writes,
 * reads, roles, reconcile); a primary replicates to its follower. Nothing
 * else reaches ShardNode, and a method missing here is refused (a new RPC
 * must be given its callers; test/unit/common/grpc/peer-role.test.ts checks the list is
 * complete).
 */
export const shardNodeCallerRoles: Readonly<Record<string, readonly PeerRole[]>> = {
  Apply: ['router'],
  ReadShards: ['router'],
  Status: ['router'],
  SetRole: ['router'],
  Reconcile: ['router'],
  ReadSketches: ['router'],
  ReadWindows: ['router'],
  CheckMembers: ['router'],
  MemberCounts: ['router'],
  ReadComponents: ['router'],
  ChangedShards: ['router'],
  AppendEntries: ['node'],
  InstallSnapshot: ['node'],
  ApplyStream: ['router'],
  ReadShardsStream: ['router'],
  StreamSnapshot: ['router'],
  ReplicateStream: ['node'],
};

/** ShardNode's long-lived streams: each frame has its own deadline (kept by the caller), the stream none. */
export function isShardNodeStream(path: string): boolean {
  return (
    path === '/tally.shard.v1.ShardNode/ApplyStream' ||
    path === '/tally.shard.v1.ShardNode/ReadShardsStream' ||
    path === '/tally.shard.v1.ShardNode/ReplicateStream'
  );
}

/**
 * The entries of a certificate's subjectaltname as Node prints it:
 * "DNS:a, IP Address:1.2.3.4, URI:spiffe://tally/node". Node quotes a value
 * holding a comma, quote or backslash as a JSON string, so a crafted URI
 * cannot smuggle in a second entry; anything that does not parse gives [].
 */
export function subjectAltNames(text: string | undefined): { type: string; value: string }[] {
  if (text === undefined || text === '') return [];
  const entry = /([A-Za-z ]+):("(?:[^"\\]|\\.)*"|[^,"]*)(?:, |$)/y;
  const names: { type: string; value: string }[] = [];
  while (entry.lastIndex < text.length) {
    const start = entry.lastIndex;
    const match = entry.exec(text);
    if (match === null || entry.lastIndex === start) return [];
    let value = match[2]!;
    if (value.startsWith('"')) {
      try {
        value = JSON.parse(value) as string;
      } catch {
        return [];
      }
    }
    names.push({ type: match[1]!, value });
  }
  return names;
}

/** The role a certificate states, or undefined when it states none, an unknown one, or more than one. */
export function peerRoleOf(certificate: Pick<PeerCertificate, 'subjectaltname'> | undefined): PeerRole | undefined {
  const roles = new Set<string>();
  for (const { type, value } of subjectAltNames(certificate?.subjectaltname)) {
    if (type !== 'URI' || !value.startsWith(peerRoleUriPrefix)) continue;
    roles.add(value.slice(peerRoleUriPrefix.length).split('/')[0]!);
  }
  if (roles.size !== 1) return undefined;
  const [role] = roles;
  return (peerRoles as readonly string[]).includes(role!) ? (role as PeerRole) : undefined;
}

function describeRole(certificate: PeerCertificate): string {
  const role = peerRoleOf(certificate);
  if (role !== undefined) return `is a ${role} certificate`;
  return `states no single role (a URI SAN ${peerRoleUriPrefix}<router|node|client>)`;
}

/**
 * A server interceptor for mutual-TLS servers: every call to `servicePath`
 * needs a peer certificate whose role `callerRoles` allows for that method;
 * anything else is refused on its metadata, before the message is read or
 * decoded. Calls to other services (health, reflection) pass.
 */
export function peerRoleInterceptor(servicePath: string, callerRoles: Readonly<Record<string, readonly PeerRole[]>>): ServerInterceptor {
  const prefix = `/${servicePath}/`;
  const serviceName = servicePath.slice(servicePath.lastIndexOf('.') + 1);
  return (methodDescriptor, call) => {
    if (!methodDescriptor.path.startsWith(prefix)) return new ServerInterceptingCall(call);
    const method = methodDescriptor.path.slice(prefix.length);
    const allowed = callerRoles[method] ?? [];
    const certificate = call.getAuthContext().sslPeerCertificate;
    const role = peerRoleOf(certificate);
    if (role !== undefined && allowed.includes(role)) return new ServerInterceptingCall(call);
    const refusal =
      certificate === undefined
        ? { code: status.UNAUTHENTICATED, details: `${serviceName}.${method} needs a verified client certificate` }
        : {
            code: status.PERMISSION_DENIED,
            details: `${serviceName}.${method} is for ${allowed.length === 0 ? 'no caller' : allowed.join(' and ')} certificates only; this peer's certificate ${describeRole(certificate)}`,
          };
    return new ServerInterceptingCall(call, {
      start: (next) => next({ onReceiveMetadata: () => call.sendStatus(refusal) }),
    });
  };
}

/**
 * A checkServerIdentity for TLS clients: the usual host name check, then the
 * server's certificate must state `role` — a client or router certificate
 * from the same CA cannot pose as a node.
 */
export function checkServerRole(role: PeerRole): (hostname: string, certificate: PeerCertificate) => Error | undefined {
  return (hostname, certificate) => {
    const hostError = tls.checkServerIdentity(hostname, certificate);
    if (hostError !== undefined) return hostError;
    if (peerRoleOf(certificate) === role) return undefined;
    return new Error(`the server at ${hostname} is not a ${role}: its certificate ${describeRole(certificate)}`);
  };
}
