// host:port parsing, shared by flag parsing (a ConfigError at startup) and
// request validation (INVALID_ARGUMENT); it throws neither, each caller names its own error.

/** host and port of `host:port` (the last colon splits, so IPv6 hosts keep theirs), or undefined. */
export function splitHostPort(value: string): { host: string; port: number } | undefined {
  const colon = value.lastIndexOf(':');
  const portText = value.slice(colon + 1);
  const port = Number(portText);
  if (colon < 0 || !/^\d{1,5}$/.test(portText) || port > 65535) return undefined;
  return { host: value.slice(0, colon), port };
}
