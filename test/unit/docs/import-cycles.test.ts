// No two files of src/ import each other, directly or through others: a cycle
// makes load order matter and hides which module is the lower layer. The
// graph is built from the sources (every static import and export-from,
// type-only ones included, and dynamic import() of a literal path), so the
// check needs no plugin; a cycle fails with its files printed in order.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir, removeTempDir } from '../../helpers/temp-dir.ts';

const repoRoot = path.resolve(import.meta.dirname, '../../..');

/** Relative specifiers a TypeScript source imports: import/export ... from '...' and import('...'). */
export function relativeSpecifiers(source: string): string[] {
  const specifiers: string[] = [];
  const patterns = [
    /^\s*(?:import|export)\b[^'";]*?\bfrom\s*['"]([^'"]+)['"]/gm,
    /^\s*import\s*['"]([^'"]+)['"]/gm,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const pattern of patterns) for (const match of source.matchAll(pattern)) if (match[1]!.startsWith('.')) specifiers.push(match[1]!);
  return specifiers;
}

/** The import graph of the .ts files under root/src (generated code aside): file to the files it imports, paths relative to root. */
function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const visit = (relative: string): void => {
    for (const entry of fs.readdirSync(path.join(root, relative), { withFileTypes: true })) {
      const child = `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        if (child !== 'src/generated') visit(child);
      } else if (entry.name.endsWith('.ts')) {
        const source = fs.readFileSync(path.join(root, child), 'utf8');
        const targets = relativeSpecifiers(source)
          .map((specifier) => path.posix.normalize(path.posix.join(path.posix.dirname(child), specifier)).replace(/\.js$/, '.ts'))
          .filter((target) => fs.existsSync(path.join(root, target)));
        graph.set(child, [...new Set(targets)]);
      }
    }
  };
  visit('src');
  return graph;
}

/** Every cycle found by a depth-first walk, one per back edge, each as the files in import order ending where it began. */
function importCycles(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const walk = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const target of graph.get(file) ?? []) {
      const seen = state.get(target);
      if (seen === 'open') cycles.push([...stack.slice(stack.indexOf(target)), target]);
      else if (seen === undefined) walk(target);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) walk(file);
  return cycles;
}

describe('the import graph of src/', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) removeTempDir(dir);
  });

  it('has no cycle', () => {
    const graph = importGraph(repoRoot);
    expect(graph.size).toBeGreaterThan(100);
    const cycles = importCycles(graph);
    expect(cycles.map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it('reports a cycle through three files and passes an acyclic tree', () => {
    const root = makeTempDir('import-cycles');
    dirs.push(root);
    fs.mkdirSync(path.join(root, 'src/a/b'), { recursive: true });
    fs.writeFileSync(path.join(root, 'src/a/one.ts'), "import { two } from './b/two.js';\nexport const one = two;\n");
    fs.writeFileSync(path.join(root, 'src/a/b/two.ts'), "export { three as two } from '../three.ts';\n");
    fs.writeFileSync(
      path.join(root, 'src/a/three.ts'),
      "import type { one } from './one.js';\nexport const three = 3 as unknown as typeof one;\n",
    );
    fs.writeFileSync(path.join(root, 'src/leaf.ts'), "const lazy = () => import('./a/three.js');\nimport 'node:fs';\nexport { lazy };\n");
    expect(importCycles(importGraph(root)).map((cycle) => cycle.join(' -> '))).toEqual([
      'src/a/b/two.ts -> src/a/three.ts -> src/a/one.ts -> src/a/b/two.ts',
    ]);
    fs.writeFileSync(path.join(root, 'src/a/three.ts'), 'export const three = 3;\n');
    expect(importCycles(importGraph(root))).toEqual([]);
  });

  it('reads multi-line imports, export-from, side-effect imports and dynamic imports, and skips packages', () => {
    const source =
      "import {\n  a,\n  type B,\n} from './a.js';\nexport * from '../b.ts';\nimport './c.js';\nimport x from 'node:fs';\nawait import('./d.js');\n";
    expect(relativeSpecifiers(source).sort()).toEqual(['../b.ts', './a.js', './c.js', './d.js']);
  });
});
