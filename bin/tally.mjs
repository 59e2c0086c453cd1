#!/usr/bin/env node
// The `tally` command: loads the TypeScript CLI through tsx.
import { register } from 'tsx/esm/api';

register();
await import('../src/client/cli.ts');
