// Shard logs in temp dirs for unit tests, each closed and removed after the
// test that opened it.
import path from 'node:path';
import { afterEach } from 'vitest';
import { ShardLog } from '../../src/node/log/index.ts';
import { checkpointFolder } from '../../src/node/state/node-memory.ts';
import { makeTempDir, removeTempDir } from './temp-dir.ts';

/**
 * Call in a describe block: `open(prefix?)` is a log (with the checkpoint
 * folder) in a new temp dir; `reopen(log)` closes it and opens its file again.
 */
export function useTempLogs(defaultPrefix: string): { open: (prefix?: string) => ShardLog; reopen: (log: ShardLog) => ShardLog } {
  const dirs: string[] = [];
  const logs: ShardLog[] = [];
  afterEach(() => {
    for (const log of logs.splice(0)) log.close();
    for (const dir of dirs.splice(0)) removeTempDir(dir);
  });
  const track = (log: ShardLog): ShardLog => {
    logs.push(log);
    return log;
  };
  return {
    open: (prefix = defaultPrefix) => {
      const dir = makeTempDir(prefix);
      dirs.push(dir);
      return track(ShardLog.open(dir, checkpointFolder));
    },
    reopen: (log) => {
      const dir = path.dirname(log.file);
      log.close();
      return track(ShardLog.open(dir, checkpointFolder));
    },
  };
}
