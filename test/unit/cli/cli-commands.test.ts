// The CLI's command table without processes: how a command line splits by
// the command's own flags, what is refused, and the exit codes of the checks
// (drift is 3 everywhere), run against a stub client.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TallyClient } from '../../../src/client/index.ts';
import { UsageError } from '../../../src/cli/args.ts';
import { commandHelp, flagsOf, parseCommandLine } from '../../../src/cli/command-spec.ts';
import { commands } from '../../../src/cli/commands/index.ts';

function commandNamed(name: string): (typeof commands)[number] {
  return commands.find((command) => command.name === name)!;
}

function usageMessage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('expected a usage error');
}

describe('cli command table', () => {
  afterEach(() => {
    process.exitCode = undefined;
    vi.restoreAllMocks();
  });

  it('flags may come before the command; "--" ends the flags; a lone -5 is an argument', () => {
    const parsed = parseCommandLine(['--router', 'a:1', 'incr', 'c', '-5', '--key=k'], commands);
    expect(parsed.command?.name).toBe('incr');
    expect(parsed.positional).toEqual(['c', '-5']);
    expect(Object.fromEntries(parsed.flags)).toEqual({ router: 'a:1', key: 'k' });
    expect(parseCommandLine(['incr', 'c', '--', '--key'], commands).positional).toEqual(['c', '--key']);
  });

  it("a flag outside the command's spec, a value on a switch, and a missing value are usage errors naming the flag", () => {
    expect(usageMessage(() => parseCommandLine(['incr', 'c', '--cached'], commands))).toBe(
      'incr does not take --cached (tally help incr lists its flags)',
    );
    expect(usageMessage(() => parseCommandLine(['directory', 'export', '--router', 'a:1'], commands))).toMatch(
      /^directory does not take --router/,
    );
    expect(usageMessage(() => parseCommandLine(['get', 'c', '--cached=yes'], commands))).toMatch(/--cached takes no value/);
    expect(usageMessage(() => parseCommandLine(['get', 'c', '--last'], commands))).toMatch(/--last needs a value/);
    expect(usageMessage(() => parseCommandLine(['frobnicate'], commands))).toMatch(/unknown command "frobnicate"/);
  });

  it('every command has a summary, and its help lists each flag it takes once', async () => {
    for (const command of commands) {
      // What the CLI loads before it parses a line naming the command (the relay's settings flags).
      await command.load?.();
      expect(command.summary.length, command.name).toBeGreaterThan(10);
      const help = commandHelp(command);
      for (const flag of Object.keys(flagsOf(command)))
        expect(help.match(new RegExp(`^  --${flag}(?= |$)`, 'gm')), `${command.name} --${flag}`).toHaveLength(1);
    }
    expect(new Set(commands.map((command) => command.name)).size).toBe(commands.length);
  });

  it('rebuild exits 3 on drift left standing and 0 on none or drift it repaired, as reconcile does', async () => {
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const report = (drift: bigint, repaired: boolean) => ({
      counter: 'm',
      members: 5n,
      storedCount: 5n + drift,
      drift,
      repaired,
      partitions: [],
    });
    const exitCodeOf = async (name: string, client: Partial<TallyClient>, args: string[]): Promise<number | undefined> => {
      process.exitCode = undefined;
      await commandNamed(name).run({ client: client as TallyClient, args, flags: new Map(), json: false });
      return process.exitCode as number | undefined;
    };
    expect(await exitCodeOf('rebuild', { rebuild: async () => report(2n, false) }, ['m'])).toBe(3);
    expect(await exitCodeOf('rebuild', { rebuild: async () => report(2n, true) }, ['m'])).toBeUndefined();
    expect(await exitCodeOf('rebuild', { rebuild: async () => report(0n, false) }, ['m'])).toBeUndefined();
    const reconcile = (shardsDrifting: number) => async () => ({ pairs: [], shards: [], shardsChecked: 4, shardsDrifting });
    expect(await exitCodeOf('reconcile', { reconcile: reconcile(1) }, [])).toBe(3);
    expect(await exitCodeOf('reconcile', { reconcile: reconcile(0) }, [])).toBeUndefined();
  });

  it('top --json prints one JSON object per refresh, int64s as strings, and no screen', async () => {
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    const hot = {
      counters: [{ counter: 'h', ratePerSec: 5, peakPerSec: 6, shards: 1, skew: 1, shardRates: [5], autoscale: true }],
      tracked: 1,
    };
    const client = {
      hot: async () => hot,
      clusterStatus: async () => ({ nodes: [{ address: 'n:1', lastLsn: 7n }] }),
    } as unknown as TallyClient;
    await commandNamed('top').run({
      client,
      args: [],
      flags: new Map([
        ['iterations', '2'],
        ['interval-ms', '100'],
        ['router', '127.0.0.1:50051'],
      ]),
      json: true,
    });
    expect(written).toHaveLength(2);
    for (const line of written) {
      const sample = JSON.parse(line) as { hot: typeof hot; status: { nodes: { lastLsn: string }[] }; atUnixMs: number };
      expect(sample.hot).toEqual(hot);
      expect(sample.status.nodes[0]!.lastLsn).toBe('7');
      expect(sample.atUnixMs).toBeGreaterThan(0);
    }
  });
});
