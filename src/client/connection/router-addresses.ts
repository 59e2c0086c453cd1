// The router addresses a client is given: createTallyClient's address or
// addresses, and the CLI's --router a,b (TALLY_ROUTER). Text checks only,
// before any channel exists: nothing here resolves a name or connects.
import { ErrorCode, TallyError, isLoopbackHost, splitHostPort, routerAddressesMax } from '../../wire/index.ts';

/**
 * The addresses of options.address or options.addresses (at most one of
 * them; neither: the TALLY_ROUTER variable of env, as the CLI reads it),
 * each host:port or a gRPC target with a port. A list holds 1 to
 * routerAddressesMax distinct addresses.
 */
export function routerAddressesOf(options: { address?: unknown; addresses?: unknown }, env: NodeJS.ProcessEnv = {}): string[] {
  if (options.address !== undefined && options.addresses !== undefined)
    throw invalid('give the router as address or as addresses, not both');
  if (options.address === undefined && options.addresses === undefined) {
    const fromEnv = env.TALLY_ROUTER?.trim();
    if (fromEnv === undefined || fromEnv === '')
      throw invalid('give the router address (address: "host:port") or addresses, or set TALLY_ROUTER=host:port[,host:port...]');
    try {
      return parseRouterList(fromEnv, 'TALLY_ROUTER');
    } catch (error) {
      throw invalid((error as Error).message);
    }
  }
  if (options.addresses === undefined) {
    if (typeof options.address !== 'string') throw invalid('give the router address (address: "host:port") or addresses');
    // One place spells out what a list means, so a comma here is a mistake, not two routers.
    if (options.address.includes(','))
      throw invalid(`address "${options.address}" holds a comma: give several routers as addresses: ["host:port", ...]`);
    return [checkTarget(options.address, 'address')];
  }
  if (!Array.isArray(options.addresses)) throw invalid('addresses must be an array of "host:port" strings');
  const addresses = options.addresses as unknown[];
  if (addresses.length === 0 || addresses.length > routerAddressesMax)
    throw invalid(`addresses must hold 1 to ${routerAddressesMax} routers, got ${addresses.length}`);
  const seen = new Set<string>();
  for (const [index, address] of addresses.entries()) {
    if (typeof address !== 'string') throw invalid(`addresses[${index}] must be a "host:port" string`);
    checkTarget(address, `addresses[${index}]`);
    if (address.includes(',')) throw invalid(`addresses[${index}] "${address}" holds a comma: one router per entry`);
    // A router twice would take two turns of the rotation and double its share.
    if (seen.has(address)) throw invalid(`addresses[${index}] "${address}" is given twice`);
    seen.add(address);
  }
  return addresses as string[];
}

/**
 * The routers of a --router value or TALLY_ROUTER: host:port (or unix:path)
 * entries separated by commas. Stricter than the library, which takes any
 * gRPC target: a typo here is a usage error, not a call to port 443.
 * Throws an Error whose message names `what`.
 */
export function parseRouterList(text: string, what: string): string[] {
  const entries = text.split(',').map((entry) => entry.trim());
  if (entries.length > routerAddressesMax) throw new Error(`${what} names ${entries.length} routers; at most ${routerAddressesMax}`);
  const seen = new Set<string>();
  for (const entry of entries) {
    if (entry === '') throw new Error(`${what} "${text}" has an empty entry: give host:port, or several as host:port,host:port`);
    if (!(entry.startsWith('unix:') ? entry.length > 'unix:'.length : isHostPort(entry)))
      throw new Error(`${what} entry "${entry}" is not host:port (a port 1-65535)`);
    if (seen.has(entry)) throw new Error(`${what} names ${entry} twice`);
    seen.add(entry);
  }
  return entries;
}

/**
 * A bearer token sent without TLS can be read by anyone on the path: the
 * client sends one in plaintext only to a loopback IP literal (or a unix
 * socket), and refuses to be built otherwise. Asked of every address: one
 * remote router in the list would see the token in the clear.
 */
export function refuseTokenInTheClear(address: string, options: { token?: string; tls?: object }): void {
  if (options.token === undefined || options.tls !== undefined) return;
  if (address.startsWith('unix:')) return;
  const host = splitHostPort(address.replace(/^dns:(\/\/[^/]*\/)?/, ''))?.host;
  if (host !== undefined && isLoopbackHost(host)) return;
  throw new TallyError(
    ErrorCode.failedPrecondition,
    `refusing to send a token to ${address} without TLS: give a CA (tls.ca, --tls-ca) or use a loopback address`,
  );
}

/** A DNS name or IPv4 literal, or an IPv6 literal in brackets, then a port 1-65535. */
function isHostPort(entry: string): boolean {
  const parsed = splitHostPort(entry);
  if (parsed === undefined || parsed.port === 0) return false;
  return /^[A-Za-z0-9_.-]+$/.test(parsed.host) || /^\[[0-9A-Fa-f:.]+\]$/.test(parsed.host);
}

/** The gRPC name-resolver schemes a target may start with. */
const targetSchemes = /^(dns|ipv4|ipv6|unix|unix-abstract):/;

/**
 * A target without a port would reach port 443 (grpc-js's default): refused,
 * naming Tally's default port, rather than failing later as an unreachable router.
 */
function checkTarget(address: string, what: string): string {
  if (address.trim() === '' || /\s/.test(address)) throw invalid(`${what} "${address}" must be a non-empty address without spaces`);
  if (/^unix(-abstract)?:/.test(address)) return address;
  // dns:[//authority/]host:port, ipv4:a:port,b:port: the part after the scheme (and authority) names the port(s).
  const rest = address.replace(targetSchemes, '').replace(/^\/\/[^/]*\//, '');
  const entries = address.startsWith('ipv4:') || address.startsWith('ipv6:') ? rest.split(',') : [rest];
  for (const entry of entries) {
    const parsed = splitHostPort(entry);
    const hostOk = parsed !== undefined && parsed.host !== '' && (!parsed.host.includes(':') || /^\[.*\]$/.test(parsed.host));
    if (!hostOk || parsed.port === 0)
      throw invalid(
        `${what} "${address}" has no port: give host:port (Tally's routers listen on 50051 by default, e.g. "${entry.replace(/:$/, '')}:50051"); without one gRPC would dial port 443`,
      );
  }
  return address;
}

function invalid(message: string): TallyError {
  return new TallyError(ErrorCode.invalidArgument, message);
}
