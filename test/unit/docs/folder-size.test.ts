// No folder of src/ holds more than twelve files flat: past that a folder
// holds more than one job and wants sub-folders, each behind its index.ts.
// Generated code is exempt (one file per message, by the generator).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeTempDir, removeTempDir } from '../../helpers/temp-dir.ts';

const repoRoot = path.resolve(import.meta.dirname, '../../..');
const filesFlatMax = 12;

/** Folders under root/src with more than filesFlatMax files directly in them, with their counts. */
export function crowdedFolders(root: string): string[] {
  const crowded: string[] = [];
  const visit = (relative: string): void => {
    const entries = fs.readdirSync(path.join(root, relative), { withFileTypes: true });
    const files = entries.filter((entry) => entry.isFile()).length;
    if (files > filesFlatMax) crowded.push(`${relative}: ${files} files`);
    for (const entry of entries)
      if (entry.isDirectory() && `${relative}/${entry.name}` !== 'src/generated') visit(`${relative}/${entry.name}`);
  };
  visit('src');
  return crowded;
}

describe('folders of src/', () => {
  it(`hold at most ${filesFlatMax} files flat`, () => {
    expect(crowdedFolders(repoRoot)).toEqual([]);
  });

  it('a folder of thirteen files is reported', () => {
    const root = makeTempDir('folder-size');
    try {
      fs.mkdirSync(path.join(root, 'src/crowded'), { recursive: true });
      for (let index = 0; index < 13; index++) fs.writeFileSync(path.join(root, `src/crowded/f${index}.ts`), '');
      expect(crowdedFolders(root)).toEqual(['src/crowded: 13 files']);
    } finally {
      removeTempDir(root);
    }
  });
});
