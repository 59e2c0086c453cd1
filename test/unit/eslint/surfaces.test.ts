// The surfaces of src/wire and src/common (eslint/surfaces.js and the
// forbidden folders of eslint.config.js) refuse what they promise to refuse,
// and let the real tree through.
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(import.meta.dirname, '../../..');
const eslint = new ESLint({ cwd: repoRoot });

async function importErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(repoRoot, file) });
  return result!.messages
    .filter((message) => message.ruleId === 'tally-surfaces/surfaces' || message.ruleId === 'no-restricted-imports')
    .map((message) => message.message);
}

describe('the wire and common surfaces', () => {
  it('refuses a deep import into wire or common from outside them, and takes their index.ts', async () => {
    expect(await importErrors('src/router/read/probe.ts', "export { TallyError } from '../../wire/errors/errors.ts';\n")).toEqual([
      'outside src/wire, import only src/wire/index.ts (or src/wire/internal/index.ts, the formats between servers)',
    ]);
    expect(await importErrors('src/node/probe.ts', "export { frameSeqMax } from '../wire/internal/shard-frames.ts';\n")).toEqual([
      'outside src/wire/internal, import only src/wire/internal/index.ts',
    ]);
    expect(await importErrors('src/cli/probe.ts', "export { parseConfig } from '../common/config.ts';\n")).toEqual([
      'outside src/common, import only src/common/index.ts',
    ]);
    expect(await importErrors('src/router/read/probe.ts', "export { TallyError } from '../../wire/index.ts';\n")).toEqual([]);
    expect(await importErrors('src/node/probe.ts', "export { frameSeqMax } from '../wire/internal/index.ts';\n")).toEqual([]);
    expect(await importErrors('src/cli/probe.ts', "export { ConfigError } from '../common/index.ts';\n")).toEqual([]);
  });

  it('keeps the client to src/wire/index.ts: never common, never the formats between servers', async () => {
    expect(await importErrors('src/client/probe.ts', "export { ConfigError } from '../common/index.ts';\n")).toEqual([
      'the client imports only src/wire/index.ts: src/common is server plumbing the client package must not ship',
    ]);
    expect(await importErrors('src/client/probe.ts', "export { frameSeqMax } from '../wire/internal/index.ts';\n")).toEqual([
      'src/wire/internal holds the formats between servers: the client imports only src/wire/index.ts',
    ]);
    expect(await importErrors('src/client/probe.ts', "export { TallyError } from '../wire/index.ts';\n")).toEqual([]);
  });

  it('keeps wire free of server code, and its shipped part free of wire/internal', async () => {
    expect(await importErrors('src/wire/errors/probe.ts', "export { ConfigError } from '../../common/index.ts';\n")).toEqual([
      "'../../common/index.ts' import is restricted from being used by a pattern. wire is what the client ships and every process shares: it imports no process and no server plumbing",
    ]);
    expect(await importErrors('src/wire/codecs/probe.ts', "export { frameSeqMax } from '../internal/index.ts';\n")).toEqual([
      'the client ships src/wire outside internal/: it may not import src/wire/internal',
    ]);
    expect(await importErrors('src/wire/internal/probe.ts', "export { TallyError } from '../errors/errors.ts';\n")).toEqual([]);
    expect(await importErrors('src/common/grpc/probe.ts', "export { parseConfig } from '../config.ts';\n")).toEqual([]);
  });

  it('lets tests reach a module’s internals', async () => {
    expect(
      await importErrors('test/unit/wire/probe.test.ts', "export { TallyError } from '../../../src/wire/errors/errors.ts';\n"),
    ).toEqual([]);
  });
});
