// docs/architecture.md's module map points at each folder's index.ts header
// instead of describing the folder itself: the map can only drift if it names
// a folder that is gone or a folder has no header to point at.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir, removeTempDir } from '../../helpers/temp-dir.ts';

const repoRoot = path.resolve(import.meta.dirname, '../../..');

/** Every `src/...` path written in code spans of the markdown, without a file extension: the folders it names. */
function foldersNamedIn(markdown: string): string[] {
  const named = new Set<string>();
  for (const match of markdown.matchAll(/`(src(?:\/[\w-]+)*)\/?`/g)) named.add(match[1]!);
  return [...named].sort();
}

/** Folders under `src` (the generated code aside) whose index.ts is missing or does not open with a comment. */
function foldersWithoutHeader(root: string): string[] {
  const problems: string[] = [];
  const visit = (relative: string): void => {
    const absolute = path.join(root, relative);
    const index = path.join(absolute, 'index.ts');
    if (relative !== 'src') {
      if (!fs.existsSync(index)) problems.push(`${relative}: no index.ts`);
      else if (!/^\s*(\/\/|\/\*)/.test(fs.readFileSync(index, 'utf8'))) problems.push(`${relative}/index.ts: no header comment`);
    }
    for (const entry of fs.readdirSync(absolute, { withFileTypes: true })) {
      if (entry.isDirectory() && entry.name !== 'generated') visit(`${relative}/${entry.name}`);
    }
  };
  visit('src');
  return problems;
}

describe('the architecture map', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) removeTempDir(dir);
  });

  it('names only folders that exist', () => {
    const named = foldersNamedIn(fs.readFileSync(path.join(repoRoot, 'docs/architecture.md'), 'utf8'));
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((folder) => !fs.statSync(path.join(repoRoot, folder), { throwIfNoEntry: false })?.isDirectory())).toEqual([]);
  });

  it('names every folder of src/', () => {
    const named = new Set(foldersNamedIn(fs.readFileSync(path.join(repoRoot, 'docs/architecture.md'), 'utf8')));
    const unnamed: string[] = [];
    const visit = (relative: string): void => {
      if (!named.has(relative)) unnamed.push(relative);
      for (const entry of fs.readdirSync(path.join(repoRoot, relative), { withFileTypes: true })) {
        if (entry.isDirectory() && !relative.startsWith('src/generated')) visit(`${relative}/${entry.name}`);
      }
    };
    for (const entry of fs.readdirSync(path.join(repoRoot, 'src'), { withFileTypes: true }))
      if (entry.isDirectory()) visit(`src/${entry.name}`);
    expect(unnamed).toEqual([]);
  });

  it('finds a header at the top of every index.ts under src/', () => {
    expect(foldersWithoutHeader(repoRoot)).toEqual([]);
  });

  it('reports a folder without index.ts, an index.ts without a header, and a named folder that is gone', () => {
    const root = makeTempDir('architecture-map');
    dirs.push(root);
    fs.mkdirSync(path.join(root, 'src/bare'), { recursive: true });
    fs.mkdirSync(path.join(root, 'src/headless'), { recursive: true });
    fs.writeFileSync(path.join(root, 'src/headless/index.ts'), 'export const x = 1; // not a header\n');
    fs.mkdirSync(path.join(root, 'src/fine/inner'), { recursive: true });
    fs.writeFileSync(path.join(root, 'src/fine/index.ts'), '// What fine holds.\nexport {};\n');
    fs.writeFileSync(path.join(root, 'src/fine/inner/index.ts'), '/** What inner holds. */\nexport {};\n');
    fs.mkdirSync(path.join(root, 'src/generated/any'), { recursive: true });
    expect(foldersWithoutHeader(root)).toEqual(['src/bare: no index.ts', 'src/headless/index.ts: no header comment']);
    expect(foldersNamedIn('| `src/fine` | … | `src/fine/index.ts` |\nsee `src/gone/` and `src/fine/inner`')).toEqual([
      'src/fine',
      'src/fine/inner',
      'src/gone',
    ]);
  });
});
