#!/usr/bin/env node
// The `tally` command: loads the TypeScript CLI through tsx.
import { register } from 'tsx/esm/api';

// One-line output only: grpc-js names IP addresses as TLS server names,
// which Node reports with a deprecation warning on every TLS call.
process.noDeprecation = true;

register();
await import('../src/cli/cli.ts');
