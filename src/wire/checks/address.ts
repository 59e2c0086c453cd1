// host:port parsing, shared by flag parsing (a ConfigError at startup) and
// request validation (INVALID_ARGUMENT); it throws neither, each caller names its own error.
import { isIPv4, isIPv6 } from 'node:net';

/** host and port of `host:port` (the last colon splits, so IPv6 hosts keep theirs), or undefined. */
export function splitHostPort(value: string): { host: string; port: number } | undefined {
  const colon = value.lastIndexOf(':');
  const portText = value.slice(colon + 1);
  const port = Number(portText);
  if (colon < 0 || !/^\d{1,5}$/.test(portText) || port > 65535) return undefined;
  return { host: value.slice(0, colon), port };
}

/**
 * Loopback means an IP literal in 127.0.0.0/8 or ::1 (brackets allowed). A
 * name (even "localhost", or "127.evil.example") is resolved by whoever
 * controls DNS or /etc/hosts, so it never counts.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIPv4(bare)) return bare.split('.')[0] === '127';
  return isIPv6(bare) && (bare === '::1' || bare === '0:0:0:0:0:0:0:1');
}
