// The term of a region's publisher: a number that is higher for every new
// tenure of the publishing role than for any before it, so a component
// published later always carries a higher version (docs/regions.md). With
// etcd it is the create revision of the supervisor key this router holds
// (etcd revisions only grow); with the embedded directory, a counter in the
// router's data directory raised and fsync'd before the first round.
import fs from 'node:fs';
import path from 'node:path';

/** Resolves with this tenure's term, or rejects when none can be had now (the publisher retries). */
export type TermSource = () => Promise<bigint>;

const termFileName = 'region-term';

/** The embedded directory's term: the last one in dataDir plus one, made durable before it is used. */
export function fileTermSource(dataDir: string): TermSource {
  return async () => {
    const file = path.join(dataDir, termFileName);
    let previous = 0n;
    try {
      const text = fs.readFileSync(file, 'utf8').trim();
      if (!/^\d{1,19}$/.test(text)) throw new Error(`${file} holds "${text.slice(0, 40)}", not a term`);
      previous = BigInt(text);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const term = previous + 1n;
    // Written aside, fsync'd, renamed: a crash leaves the old term or the new one, never a torn file.
    const temporary = `${file}.tmp`;
    const handle = fs.openSync(temporary, 'w', 0o600);
    try {
      fs.writeSync(handle, `${term}\n`);
      fs.fsyncSync(handle);
    } finally {
      fs.closeSync(handle);
    }
    fs.renameSync(temporary, file);
    const directory = fs.openSync(dataDir, 'r');
    try {
      fs.fsyncSync(directory);
    } finally {
      fs.closeSync(directory);
    }
    return term;
  };
}

/** etcd's term: the supervisor key's create revision while this router holds it. */
export function revisionTermSource(createRevision: () => string | undefined): TermSource {
  return async () => {
    const revision = createRevision();
    if (revision === undefined) throw new Error('this router does not hold the supervisor key');
    return BigInt(revision);
  };
}
