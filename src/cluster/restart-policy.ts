// When the launcher restarts a child that died (router, node or etcd): after
// a backoff that grows with recent restarts, and at most a few times a window,
// so a child that cannot start takes the cluster down instead of spinning.
// Decides and waits only: it never starts a child the launcher has not started once.
import {
  launcherRestartBackoffMaxMs,
  launcherRestartBackoffMs,
  launcherRestartsPerWindowMax,
  launcherRestartWindowMs,
} from '../common/index.ts';

export interface RestartPolicyOptions {
  restartsPerWindowMax: number;
  windowMs: number;
  backoffMs: number;
  backoffMaxMs: number;
}

export const launcherRestartPolicy: RestartPolicyOptions = {
  restartsPerWindowMax: launcherRestartsPerWindowMax,
  windowMs: launcherRestartWindowMs,
  backoffMs: launcherRestartBackoffMs,
  backoffMaxMs: launcherRestartBackoffMaxMs,
};

export type RestartDecision = { restart: true; delayMs: number } | { restart: false; restartsInWindow: number };

/** The restart history of one child. */
export class RestartPolicy {
  private readonly restartTimesMs: number[] = [];

  constructor(readonly options: RestartPolicyOptions = launcherRestartPolicy) {}

  /** The child exited unexpectedly at nowMs: restart it after delayMs, or give up. */
  onExit(nowMs: number): RestartDecision {
    const { restartsPerWindowMax, windowMs, backoffMs, backoffMaxMs } = this.options;
    while (this.restartTimesMs.length > 0 && nowMs - this.restartTimesMs[0]! >= windowMs) this.restartTimesMs.shift();
    const recent = this.restartTimesMs.length;
    if (recent >= restartsPerWindowMax) return { restart: false, restartsInWindow: recent };
    this.restartTimesMs.push(nowMs);
    return { restart: true, delayMs: Math.min(backoffMaxMs, backoffMs * 2 ** recent) };
  }
}

/** A child the launcher keeps running: ManagedProcess and EtcdProcess. */
export interface Restartable {
  readonly name: string;
  /** Resolves when the current child exits, with its exit code (null: killed by a signal). */
  exited(): Promise<number | null>;
  /** Resolves once the child is ready; rejects when it exits first or is not ready in time. */
  start(): Promise<void>;
  /** Stops the child (and waits): used on a child whose start failed but may still be running. */
  stop(): Promise<void>;
}

export interface KeepRestartingOptions {
  policy: RestartPolicy;
  nowMs: () => number;
  sleep: (ms: number) => Promise<void>;
  /** True once the launcher is stopping: an exit is then expected and nothing restarts. */
  stopping: () => boolean;
  /** One line per exit and restart, for the operator. */
  log: (line: string) => void;
  /** The child exited too often: the launcher stops everything (called once, then the watch ends). */
  giveUp: (reason: string) => void;
}

function exitText(code: number | null): string {
  return code === null ? 'killed by a signal' : `code ${code}`;
}

/**
 * Watches a started child until the launcher stops: every unexpected exit is
 * logged and, as the policy says, restarted after a backoff or given up on.
 * A restart that fails counts as another exit.
 */
export async function keepRestarting(member: Restartable, options: KeepRestartingOptions): Promise<void> {
  const { policy } = options;
  for (;;) {
    const code = await member.exited();
    if (options.stopping()) return;
    const decision = policy.onExit(options.nowMs());
    if (!decision.restart) {
      options.giveUp(
        `${member.name} exited (${exitText(code)}) after ${decision.restartsInWindow} restarts within ${policy.options.windowMs / 1_000} s`,
      );
      return;
    }
    options.log(`${member.name} exited unexpectedly (${exitText(code)}); restarting it in ${decision.delayMs} ms`);
    await options.sleep(decision.delayMs);
    if (options.stopping()) return;
    try {
      await member.start();
      options.log(`${member.name} restarted`);
    } catch (error) {
      options.log(`${member.name} failed to restart: ${(error as Error).message}`);
      // Not ready in time leaves it running: stop it, so its exit is the next one counted.
      await member.stop();
    }
  }
}
