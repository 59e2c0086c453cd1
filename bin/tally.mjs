#!/usr/bin/env node
// The `tally` command: runs the compiled CLI in dist/ (`npm run build`, which
// `npm start` runs first). Tests and development run src/cli/cli.ts through tsx.
import fs from 'node:fs';

// One-line output only: grpc-js names IP addresses as TLS server names,
// which Node reports with a deprecation warning on every TLS call.
process.noDeprecation = true;

const cliUrl = new URL('../dist/cli/cli.js', import.meta.url);
if (!fs.existsSync(cliUrl)) {
  process.stderr.write('tally: dist/ is not built: run `npm run build` (npm start does it too)\n');
  process.exit(2);
}
await import(cliUrl.href);
