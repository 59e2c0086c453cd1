// The router's rooms, checked by lint: from outside a folder only its
// index.ts; folders import only the layers below them; the SQLite and etcd
// stores never import each other; etcd3 and better-sqlite3 stay inside the
// modules whose job they are. A rule of its own rather than
// no-restricted-imports patterns: the check depends on where the importing
// file is, and the message names the layer table.
import path from 'node:path';

const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const routerRoot = path.join(repoRoot, 'src', 'router');

/**
 * What each router folder may import besides common and the data-structure
 * modules (window, sketch, membership). Root files (main.ts, build.ts,
 * config.ts, index.ts) wire and may import every folder.
 */
export const routerLayers = {
  directory: [],
  nodes: [],
  metrics: [],
  read: ['directory', 'nodes', 'metrics'],
  write: ['directory', 'nodes', 'metrics', 'read'],
  sizing: ['directory', 'nodes', 'metrics'],
  supervision: ['directory', 'nodes', 'metrics'],
  counters: ['directory', 'nodes', 'metrics', 'read', 'sizing'],
  api: ['directory', 'nodes', 'metrics', 'read', 'write', 'sizing', 'supervision', 'counters'],
};

/** Packages only some router files may import, and which. */
const packageHomes = {
  etcd3: ['directory/etcd/', 'supervision/supervisor-election.ts'],
  'better-sqlite3': ['directory/sqlite/'],
};

/** The router folder of an absolute path ('.' for a root file), or undefined outside src/router. */
function folderOf(file) {
  const relative = path.relative(routerRoot, file);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return undefined;
  const parts = relative.split(path.sep);
  return parts.length === 1 ? '.' : parts[0];
}

function check(context, node, specifier) {
  const file = context.filename;
  const fromFolder = folderOf(file);
  if (typeof specifier !== 'string') return;
  if (!specifier.startsWith('.')) {
    const homes = packageHomes[specifier];
    if (homes === undefined || fromFolder === undefined) return;
    const relative = path.relative(routerRoot, file).split(path.sep).join('/');
    if (!homes.some((home) => relative === home || relative.startsWith(home)))
      context.report({ node, message: `${specifier} is imported only under ${homes.map((home) => `src/router/${home}`).join(' and ')}` });
    return;
  }
  const target = path.resolve(path.dirname(file), specifier);
  const toFolder = folderOf(target);
  if (toFolder === undefined || toFolder === '.') {
    // Outside the router, only its surface: src/router/index.ts.
    if (toFolder === '.' && fromFolder === undefined && path.basename(target) !== 'index.ts')
      context.report({ node, message: 'outside src/router, import only src/router/index.ts' });
    return;
  }
  if (fromFolder === undefined) {
    context.report({ node, message: 'outside src/router, import only src/router/index.ts' });
    return;
  }
  if (fromFolder === toFolder) {
    // Inside directory/: the two stores never import each other.
    const sub = (p) => path.relative(path.join(routerRoot, 'directory'), p).split(path.sep)[0];
    if (toFolder === 'directory') {
      const [fromSub, toSub] = [sub(file), sub(target)];
      if ((fromSub === 'sqlite' && toSub === 'etcd') || (fromSub === 'etcd' && toSub === 'sqlite'))
        context.report({ node, message: 'the SQLite and etcd stores never import each other: share through the directory model' });
      else if ((toSub === 'sqlite' || toSub === 'etcd') && fromSub !== toSub && path.basename(target) !== 'index.ts')
        context.report({ node, message: `import directory/${toSub}/index.ts, not its files` });
    }
    return;
  }
  if (target !== path.join(routerRoot, toFolder, 'index.ts'))
    context.report({ node, message: `import ${toFolder}/ through its surface, src/router/${toFolder}/index.ts` });
  if (fromFolder !== '.' && !routerLayers[fromFolder]?.includes(toFolder))
    context.report({
      node,
      message: `router/${fromFolder} may not import router/${toFolder}: ${fromFolder} may use ${routerLayers[fromFolder]?.join(', ') || 'only common'} (eslint/import-layers.js)`,
    });
}

const rule = {
  meta: { type: 'problem', docs: { description: "the router's import layers" }, schema: [] },
  create(context) {
    const visit = (node) => check(context, node, node.source?.value);
    return {
      ImportDeclaration: visit,
      ExportNamedDeclaration: visit,
      ExportAllDeclaration: visit,
      ImportExpression: visit,
    };
  },
};

export default { rules: { 'router-layers': rule } };
