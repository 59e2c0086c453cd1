// Builds @tally/client from the repository's sources: src/client/index.ts and
// the files it imports, compiled to dist/, and the proto files they load at
// run time. Clean every time (npm pack runs it first), so a package never
// carries files of an older build; fails if the code imports a package that
// is not one of the package's dependencies (server code coming in by mistake).
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
// src/common/proto.ts loads both at import time.
fs.mkdirSync(protoDir);
for (const name of ['counter.proto', 'shard.proto']) fs.copyFileSync(path.join(repoRoot, 'proto', name), path.join(protoDir, name));

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
