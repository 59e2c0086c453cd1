// The router's HTTP port, as its ready line reports it (asked for with --http-port any).
export function httpPortOf(logs: readonly string[]): number {
  for (const line of logs) {
    const match = /"httpPort":(\d+)/.exec(line);
    if (match !== null) return Number(match[1]);
  }
  throw new Error('the router reported no httpPort');
}
