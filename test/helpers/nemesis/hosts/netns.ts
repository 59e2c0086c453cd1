// Network namespaces by name: create, run a command inside, delete, and sweep
// the leftovers of a harness that died. Names are <prefix><pid>-<cluster>-<host>,
// so a sweep knows whose they are; it never touches a namespace it did not name.
import { execFileSync } from 'node:child_process';

/** Every namespace the harness makes starts with this. */
export const namespacePrefix = 'tnm';

/** Runs a command to completion; the error carries its stderr. */
export function run(command: string, args: readonly string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
    throw new Error(`${command} ${args.join(' ')} failed: ${stderr || (error as Error).message}`, { cause: error });
  }
}

/** Runs a command inside a namespace (ip netns exec). */
export function runIn(namespace: string, command: string, args: readonly string[]): string {
  return run('ip', ['netns', 'exec', namespace, command, ...args]);
}

export function listNamespaces(): string[] {
  return run('ip', ['netns', 'list'])
    .split('\n')
    .map((line) => line.trim().split(/\s+/)[0] ?? '')
    .filter((name) => name !== '');
}

export function addNamespace(name: string): void {
  run('ip', ['netns', 'add', name]);
  run('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
}

/** SIGKILLs whatever still runs in the namespace, then deletes it (its veth ends go with it). */
export function deleteNamespace(name: string): void {
  let pids: string[] = [];
  try {
    pids = run('ip', ['netns', 'pids', name]).split('\n').filter(Boolean);
  } catch {
    // Already gone.
  }
  for (const pid of pids) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // Exited meanwhile.
    }
  }
  try {
    run('ip', ['netns', 'del', name]);
  } catch {
    // Already gone.
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Deletes every harness namespace whose owning pid no longer runs: a test killed before its cleanup. */
export function sweepLeftoverNamespaces(): string[] {
  const swept: string[] = [];
  for (const name of listNamespaces()) {
    const match = new RegExp(`^${namespacePrefix}(\\d+)-`).exec(name);
    if (match === null || alive(Number(match[1]))) continue;
    deleteNamespace(name);
    swept.push(name);
  }
  return swept;
}
