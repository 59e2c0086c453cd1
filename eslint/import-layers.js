// The router's rooms, checked by lint: from outside a folder only its
// index.ts; folders import only the layers below them; the SQLite and etcd
// stores never import each other; etcd3 and better-sqlite3 stay inside the
// modules whose job they are. A rule of its own rather than
// no-restricted-imports patterns: the check depends on where the importing
// file is, and the message names the layer table.
import path from 'node:path';

const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

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
  // Regions: publishing components, receiving them, global reads.
  region: ['directory', 'nodes', 'metrics', 'read'],
  api: ['directory', 'nodes', 'metrics', 'read', 'write', 'sizing', 'supervision', 'counters', 'region'],
  // The Connect port: the api's handlers over HTTP.
  http: ['api', 'metrics'],
};

/** The node's rooms: the log is the bottom; state builds on it; replication on both; the write path on all three; the service's handlers on everything. */
export const nodeLayers = {
  log: [],
  state: ['log'],
  replication: ['log', 'state'],
  write: ['log', 'state', 'replication'],
  handlers: ['log', 'state', 'replication', 'write'],
};

/** Each process's folder and its layer table. */
const processes = [
  { name: 'router', root: path.join(repoRoot, 'src', 'router'), layers: routerLayers },
  { name: 'node', root: path.join(repoRoot, 'src', 'node'), layers: nodeLayers },
];

/** Packages only some router files may import, and which. */
const packageHomes = {
  etcd3: ['directory/etcd/', 'supervision/supervisor-election.ts'],
  'better-sqlite3': ['directory/sqlite/'],
  '@connectrpc/connect': ['http/'],
  '@connectrpc/connect-node': ['http/'],
};

/** The folder of an absolute path under root ('.' for a root file), or undefined outside root. */
function folderOf(root, file) {
  const relative = path.relative(root, file);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return undefined;
  const parts = relative.split(path.sep);
  return parts.length === 1 ? '.' : parts[0];
}

function check(context, node, specifier, { name, root: routerRoot, layers: routerLayers }) {
  const file = context.filename;
  const folderIn = (target) => folderOf(routerRoot, target);
  const fromFolder = folderIn(file);
  if (typeof specifier !== 'string') return;
  if (!specifier.startsWith('.')) {
    const homes = packageHomes[specifier];
    if (homes === undefined || fromFolder === undefined || name !== 'router') return;
    const relative = path.relative(routerRoot, file).split(path.sep).join('/');
    if (!homes.some((home) => relative === home || relative.startsWith(home)))
      context.report({ node, message: `${specifier} is imported only under ${homes.map((home) => `src/router/${home}`).join(' and ')}` });
    return;
  }
  const target = path.resolve(path.dirname(file), specifier);
  const toFolder = folderIn(target);
  if (toFolder === undefined || toFolder === '.') {
    // Outside the router, only its surface: src/router/index.ts.
    if (toFolder === '.' && fromFolder === undefined && path.basename(target) !== 'index.ts')
      context.report({ node, message: `outside src/${name}, import only src/${name}/index.ts` });
    return;
  }
  if (fromFolder === undefined) {
    context.report({ node, message: `outside src/${name}, import only src/${name}/index.ts` });
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
    context.report({ node, message: `import ${toFolder}/ through its surface, src/${name}/${toFolder}/index.ts` });
  if (fromFolder !== '.' && !routerLayers[fromFolder]?.includes(toFolder))
    context.report({
      node,
      message: `${name}/${fromFolder} may not import ${name}/${toFolder}: ${fromFolder} may use ${routerLayers[fromFolder]?.join(', ') || 'only common'} (eslint/import-layers.js)`,
    });
}

const rule = {
  meta: { type: 'problem', docs: { description: "the router's import layers" }, schema: [] },
  create(context) {
    const visit = (node) => {
      for (const process of processes) check(context, node, node.source?.value, process);
    };
    return {
      ImportDeclaration: visit,
      ExportNamedDeclaration: visit,
      ExportAllDeclaration: visit,
      ImportExpression: visit,
    };
  },
};

export default { rules: { 'router-layers': rule } };
