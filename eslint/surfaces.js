// The surfaces of src/wire and src/common, checked by lint: from outside
// either folder, only its index.ts (and src/wire/internal/index.ts, the
// formats between servers); the client never reaches src/common or
// src/wire/internal, so @tally/client ships no server code; the part of wire
// the client ships never imports wire/internal. Inside a folder, files import
// each other freely. A rule of its own rather than no-restricted-imports
// patterns: the check depends on where the importing file is.
import path from 'node:path';

const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const src = path.join(repoRoot, 'src');
const wire = path.join(src, 'wire');
const wireInternal = path.join(wire, 'internal');
const common = path.join(src, 'common');
const client = path.join(src, 'client');

const inside = (folder, file) => file === folder || file.startsWith(`${folder}${path.sep}`);

/** The one problem with `file` importing `target` (absolute paths), or undefined. */
export function surfaceProblem(file, target) {
  const fromClient = inside(client, file);
  if (inside(common, target) && !inside(common, file)) {
    if (fromClient) return 'the client imports only src/wire/index.ts: src/common is server plumbing the client package must not ship';
    if (target !== path.join(common, 'index.ts')) return 'outside src/common, import only src/common/index.ts';
    return undefined;
  }
  if (!inside(wire, target)) return undefined;
  if (inside(wireInternal, target) && !inside(wireInternal, file)) {
    if (fromClient) return 'src/wire/internal holds the formats between servers: the client imports only src/wire/index.ts';
    if (inside(wire, file)) return 'the client ships src/wire outside internal/: it may not import src/wire/internal';
    if (target !== path.join(wireInternal, 'index.ts')) return 'outside src/wire/internal, import only src/wire/internal/index.ts';
    return undefined;
  }
  if (!inside(wire, file) && target !== path.join(wire, 'index.ts'))
    return 'outside src/wire, import only src/wire/index.ts (or src/wire/internal/index.ts, the formats between servers)';
  return undefined;
}

const rule = {
  meta: { type: 'problem', docs: { description: 'the surfaces of src/wire and src/common' }, schema: [] },
  create(context) {
    const visit = (node) => {
      const specifier = node.source?.value;
      if (typeof specifier !== 'string' || !specifier.startsWith('.')) return;
      const problem = surfaceProblem(context.filename, path.resolve(path.dirname(context.filename), specifier));
      if (problem !== undefined) context.report({ node, message: problem });
    };
    return {
      ImportDeclaration: visit,
      ExportNamedDeclaration: visit,
      ExportAllDeclaration: visit,
      ImportExpression: visit,
    };
  },
};

export default { rules: { surfaces: rule } };
