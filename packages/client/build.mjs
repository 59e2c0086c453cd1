// Builds @tally/client from the repository's sources: src/client/index.ts and
// the files it imports, compiled to dist/ (the public contract is compiled in:
// src/client/counter-descriptor.ts; never the nodes' shard.proto). Clean every time (npm pack runs it first), so a package never
// carries files of an older build; fails if the code imports a package that
// is not one of the package's dependencies (server code coming in by mistake).
// Only what the public entry points (the client and @tally/client/testing)
// reach ships: every .js and .d.ts they do not import is removed.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = path.dirname(fileURLToPath(import.meta.url));
const distDir = path.join(packageDir, 'dist');
const protoDir = path.join(packageDir, 'proto');

fs.rmSync(distDir, { recursive: true, force: true });
// An older build's copy of proto/: the contract is compiled in now.
fs.rmSync(protoDir, { recursive: true, force: true });
const tscPath = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tscPath, '-p', path.join(packageDir, 'tsconfig.json')], { stdio: 'inherit' });

// The JavaScript reachable from the public entry point, by its relative
// imports (type-only imports are gone from the output): the rest (the
// generated types' empty modules, files only declarations name) is removed,
// so the tarball holds only what the API reaches and no empty file.
const reachableJs = new Set();
// The entry points: the client, and @tally/client/testing.
const entryPoints = ['client/index', 'client/testing'];
const pendingJs = entryPoints.map((entry) => path.join(distDir, `${entry}.js`));
for (let file = pendingJs.pop(); file !== undefined; file = pendingJs.pop()) {
  if (reachableJs.has(file)) continue;
  reachableJs.add(file);
  for (const [, specifier] of fs.readFileSync(file, 'utf8').matchAll(/(?:\bfrom|\bimport)\s*\(?\s*['"](\.[^'"]+)['"]/g))
    pendingJs.push(path.resolve(path.dirname(file), specifier));
}
for (const file of fs.readdirSync(distDir, { recursive: true })) {
  const full = path.join(distDir, file);
  if (file.endsWith('.js') && !reachableJs.has(full)) fs.rmSync(full);
}

// The declarations reachable from the public entry point, by their relative imports.
const reachable = new Set();
const pending = entryPoints.map((entry) => path.join(distDir, `${entry}.d.ts`));
for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
  if (reachable.has(file)) continue;
  reachable.add(file);
  for (const [, specifier] of fs.readFileSync(file, 'utf8').matchAll(/(?:\bfrom|\bimport)\s*\(?\s*['"](\.[^'"]+)['"]/g))
    pending.push(path.resolve(path.dirname(file), specifier.replace(/\.(ts|js)$/, '.d.ts')));
}
for (const file of fs.readdirSync(distDir, { recursive: true })) {
  const full = path.join(distDir, file);
  if (file.endsWith('.d.ts') && !reachable.has(full)) fs.rmSync(full);
}
// Folders left empty by the pruning go too; an empty file left is a build error.
for (const dir of fs
  .readdirSync(distDir, { recursive: true })
  .map((file) => path.join(distDir, file))
  .reverse())
  if (fs.statSync(dir).isDirectory() && fs.readdirSync(dir).length === 0) fs.rmdirSync(dir);
const empty = fs
  .readdirSync(distDir, { recursive: true })
  .filter((file) => fs.statSync(path.join(distDir, file)).isFile() && fs.readFileSync(path.join(distDir, file), 'utf8').trim() === '');
if (empty.length > 0) {
  process.stderr.write(`@tally/client must not ship empty files:\n  ${empty.join('\n  ')}\n`);
  process.exit(1);
}
const internal = fs.readdirSync(distDir, { recursive: true }).filter((file) => /shard|tally-shard/.test(file));
if (internal.length > 0) {
  process.stderr.write(`@tally/client must not carry the nodes' internal protocol:\n  ${internal.join('\n  ')}\n`);
  process.exit(1);
}

const { dependencies } = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
const strays = [];
for (const file of fs.readdirSync(distDir, { recursive: true })) {
  if (!/\.(js|d\.ts)$/.test(file)) continue;
  const text = fs.readFileSync(path.join(distDir, file), 'utf8');
  for (const [, specifier] of text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*['"]([^'"]+)['"]/g)) {
    if (specifier.startsWith('.') || specifier.startsWith('node:')) continue;
    const packageName = specifier
      .split('/')
      .slice(0, specifier.startsWith('@') ? 2 : 1)
      .join('/');
    if (!(packageName in dependencies)) strays.push(`dist/${file} imports ${specifier}`);
  }
}
if (strays.length > 0) {
  process.stderr.write(`@tally/client may import only node: modules and its dependencies:\n  ${strays.join('\n  ')}\n`);
  process.exit(1);
}
