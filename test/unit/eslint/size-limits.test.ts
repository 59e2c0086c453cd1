// The size limits in eslint.config.js: a file in src/ over 600 lines and a
// function over 100 lines (blank lines and comments aside) fail lint; code
// outside src/ and generated code are not held to them.
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(import.meta.dirname, '../../..');
const eslint = new ESLint({ cwd: repoRoot });

async function sizeErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(repoRoot, file), warnIgnored: false });
  return (result?.messages ?? []).filter((message) => message.ruleId?.startsWith('max-lines')).map((message) => message.message);
}

/** A function of `statementCount` one-line statements, with a comment and a blank line between each. */
function functionOf(statementCount: number): string {
  const body = Array.from({ length: statementCount }, (_, index) => `  // step ${index}\n  total += ${index};\n`).join('\n');
  return `export function long(): number {\n  let total = 0;\n${body}  return total;\n}\n`;
}

describe('size limits', () => {
  it('refuse a file over 600 lines, comments and blank lines counted', async () => {
    const lines = Array.from({ length: 300 }, (_, index) => `// line ${index}\nexport const value${index} = ${index};\n`).join('');
    expect(await sizeErrors('src/cli/probe.ts', lines)).toEqual([]);
    expect(await sizeErrors('src/cli/probe.ts', `${lines}\n`)).toEqual(['File has too many lines (601). Maximum allowed is 600.']);
  });

  it('refuse a function over 100 lines of code, its comments and blank lines not counted', async () => {
    expect(await sizeErrors('src/router/api/probe.ts', functionOf(96))).toEqual([]);
    expect(await sizeErrors('src/router/api/probe.ts', functionOf(97))).toEqual([
      "Function 'long' has too many lines (101). Maximum allowed is 100.",
    ]);
  });

  it('leave tests and generated code alone', async () => {
    expect(await sizeErrors('test/unit/cli/probe.test.ts', functionOf(200))).toEqual([]);
    expect(await sizeErrors('src/generated/probe.ts', functionOf(200))).toEqual([]);
  });
});
