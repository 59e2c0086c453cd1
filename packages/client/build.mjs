// Builds @tally/client from the repository's sources: src/client/index.ts and
// the files it imports, compiled to dist/, and the public contract they load
// at run time (proto/counter.proto and the service config; never the nodes'
// shard.proto). Clean every time (npm pack runs it first), so a package never
// carries files of an older build; fails if the code imports a package that
// is not one of the package's dependencies (server code coming in by mistake).
// Only the declarations the public surface needs ship: every .d.ts that
// dist/client/index.d.ts does not reach is removed (the JavaScript stays).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(packageDir, '../..');
const distDir = path.join(packageDir, 'dist');
const protoDir = path.join(packageDir, 'proto');

fs.rmSync(distDir, { recursive: true, force: true });
fs.rmSync(protoDir, { recursive: true, force: true });
const tscPath = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tscPath, '-p', path.join(packageDir, 'tsconfig.json')], { stdio: 'inherit' });
// src/client/counter-proto.ts loads these at import time.
fs.mkdirSync(protoDir);
for (const name of ['counter.proto', 'service-config.json']) fs.copyFileSync(path.join(repoRoot, 'proto', name), path.join(protoDir, name));

// The declarations reachable from the public entry point, by their relative imports.
const reachable = new Set();
const pending = [path.join(distDir, 'client/index.d.ts')];
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
