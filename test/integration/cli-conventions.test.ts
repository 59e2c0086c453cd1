// The conventions of the tally CLI and of every server process, as a user
// meets them in a shell: --version, -h, help <command>, per-command --help,
// a flag the command does not take refused in one line with exit 2, errors
// as JSON under --json, and --help on router, node and the launcher listing
// every flag with its environment key and default. No cluster is started.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { childrenFromDist, nodeMainPath, repoRoot, routerMainPath } from '../../src/cluster/managed-process.ts';
import { commands } from '../../src/cli/commands/index.ts';
import { flagsOf } from '../../src/cli/command-spec.ts';
import { relaySettingsHelp } from '../../src/relay/index.ts';
import { tally, type CliResult } from '../helpers/cli.ts';

const launcherMainPath = path.join(repoRoot, childrenFromDist ? 'dist/cluster/main.js' : 'src/cluster/main.ts');

function runProcess(mainPath: string, args: string[]): Promise<CliResult> {
  const nodeArgs = mainPath.endsWith('.ts') ? ['--import', 'tsx', mainPath] : [mainPath];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, ...args], { cwd: repoRoot, env: { ...process.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

function oneLine(result: CliResult): string {
  const lines = result.stderr.trim().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  return lines[0]!;
}

describe('cli and process conventions', () => {
  it('--version prints the package version; -h, --help and help print every command, exit 0', async () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    const shown = await tally(['--version']);
    expect(shown).toMatchObject({ code: 0, stdout: `tally ${version}\n` });
    for (const asked of [['-h'], ['--help'], ['help']]) {
      const result = await tally(asked);
      expect(result.code, asked.join(' ')).toBe(0);
      for (const command of commands) expect(result.stdout).toMatch(new RegExp(`^  ${command.name} `, 'm'));
      expect(result.stdout).toContain('exit codes:');
    }
    // Nothing asked: the same list, as a usage error.
    const bare = await tally([]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('usage: tally <command>');
  });

  it('help <command> and <command> --help / -h print the same text, listing every flag the command takes', async () => {
    for (const name of ['incr', 'relay']) {
      const command = commands.find((candidate) => candidate.name === name)!;
      await command.load?.();
      const viaHelp = await tally(['help', name]);
      const viaFlag = await tally([name, '--help']);
      const viaShort = await tally([name, '-h']);
      expect(viaHelp.code, name).toBe(0);
      expect(viaFlag.stdout).toBe(viaHelp.stdout);
      expect(viaShort.stdout).toBe(viaHelp.stdout);
      expect(viaHelp.stdout).toMatch(new RegExp(`^usage: tally ${name}`));
      for (const flag of Object.keys(flagsOf(command))) expect(viaHelp.stdout, `${name} --${flag}`).toContain(`--${flag}`);
    }
    const unknown = await tally(['help', 'frobnicate']);
    expect(unknown.code).toBe(2);
    expect(oneLine(unknown)).toContain('no command "frobnicate"');
  });

  it('a flag of another command, or of none, is refused in one line with exit 2 before any call; --json makes it JSON', async () => {
    // --cached belongs to get, --key to incr: neither is incr's or get's respectively. No router is running at port 1.
    for (const args of [
      ['incr', 'c', '--cached'],
      ['get', 'c', '--key', 'k'],
      ['status', '--repair'],
      ['get', 'c', '--no-such-flag'],
    ]) {
      const result = await tally([...args, '--router', '127.0.0.1:1']);
      expect(result.code, args.join(' ')).toBe(2);
      expect(oneLine(result)).toMatch(/^tally: \S+ does not take --[a-z-]+ \(tally help \S+ lists its flags\)$/);
      expect(result.stdout).toBe('');
    }
    const json = await tally(['incr', 'c', '--cached', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(oneLine(json))).toEqual({
      error: { code: 'usage', message: 'incr does not take --cached (tally help incr lists its flags)', exitCode: 2 },
    });
    const unknownCommand = await tally(['frobnicate', '--json']);
    expect(JSON.parse(oneLine(unknownCommand)).error).toMatchObject({ code: 'usage', exitCode: 2 });
  });

  it('a failed call under --json is one JSON object on stderr with its code and exit 1', async () => {
    const result = await tally(['get', 'c', '--json', '--router', '127.0.0.1:1', '--deadline-ms', '1000']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const { error } = JSON.parse(oneLine(result)) as { error: { code: string; message: string; exitCode: number } };
    expect(error.code).toBe('unavailable');
    expect(error.exitCode).toBe(1);
    expect(error.message).toContain('127.0.0.1:1');
  });

  it('processes: router, node and the launcher answer --help and -h with every flag, its environment key and default, exit 0', async () => {
    for (const [mainPath, expected] of [
      [routerMainPath, ['--listen TEXT', 'TALLY_LISTEN', 'default 127.0.0.1:50051', '--pairs TEXT', 'TALLY_PAIRS', 'TALLY_ADMIN_TOKEN']],
      [nodeMainPath, ['--data-dir TEXT', 'TALLY_DATA_DIR', 'default ./data/node', '--insecure[=true|false]', 'TALLY_DEDUP_WINDOW_MS']],
      [launcherMainPath, ['--pairs N (1..16)', 'TALLY_PAIRS', 'default 2', '--store embedded|etcd']],
    ] as const) {
      for (const flag of ['--help', '-h']) {
        const result = await runProcess(mainPath, [flag]);
        expect(result.code, `${mainPath} ${flag}: ${result.stderr}`).toBe(0);
        expect(result.stdout).toMatch(/^usage: \S+ \[--flag value\]\.\.\./);
        for (const text of expected) expect(result.stdout, `${mainPath} ${text}`).toContain(text);
      }
    }
    // The list is the parser's: every flag it lists is one it accepts, and an unknown one is still refused.
    const refused = await runProcess(nodeMainPath, ['--no-such-flag', '1']);
    expect(refused.code).toBe(2);
    expect(oneLine(refused)).toBe('config error: unknown flag --no-such-flag');
  });

  it("processes: tally relay --help lists every setting the relay's reader reads, with its environment key", async () => {
    const settings = relaySettingsHelp();
    expect(settings.map((setting) => setting.flag)).toContain('postgres');
    const result = await tally(['relay', '--help']);
    expect(result.code).toBe(0);
    for (const setting of settings) {
      expect(result.stdout).toContain(`--${setting.flag} `);
      expect(result.stdout).toContain(setting.envKey);
    }
  });
});
