// The outbox tests' environment: a secured one-pair cluster with a short
// dedup window beside a real PostgreSQL, and the CLI run against both as a
// secured deployment runs the relay (TLS and the admin token).
import path from 'node:path';
import { expect } from 'vitest';
import { startCluster, type TestCluster } from './cluster.ts';
import type { CliResult } from './cli.ts';
import { startPostgres, type TestPostgres } from './postgres.ts';

/** Short, so the window-edge test waits it out in seconds; nothing else re-sends late. */
export const outboxDedupWindowMs = 3_000;
export const outboxWindowArgs = ['--dedup-window-ms', String(outboxDedupWindowMs)];

export interface OutboxEnvironment {
  tc: TestCluster;
  pg: TestPostgres;
  /** The router and how to reach it. */
  tallyArgs: string[];
}

export async function startOutboxEnvironment(): Promise<OutboxEnvironment> {
  const [tc, pg] = await Promise.all([
    startCluster({ pairs: 1, secure: true, routerArgs: outboxWindowArgs, nodeArgs: outboxWindowArgs }),
    startPostgres(),
  ]);
  const certDir = tc.certDir!;
  const tallyArgs = [
    '--router',
    tc.cluster.routerAddress,
    '--tls-ca',
    path.join(certDir, 'ca.crt'),
    // The relay asks ClusterStatus (AdminService) for the cluster's dedup window: the admin token.
    '--token-file',
    path.join(certDir, 'admin.token'),
  ];
  return { tc, pg, tallyArgs };
}

/** A CLI refusal: non-zero, one line naming `text`, no stack trace. */
export function expectOneLineFailure(result: CliResult, text: string): void {
  expect(result.code, result.stderr).not.toBe(0);
  expect(result.stderr.trim().split('\n'), result.stderr).toHaveLength(1);
  expect(result.stderr).toContain(text);
  expect(result.stderr).not.toMatch(/\n\s+at /);
}
