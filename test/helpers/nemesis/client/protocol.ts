// The commands the client host's agent takes, one JSON line each: shared by the
// agent (client-agent.ts) and the harness's end (client-host.ts). Types only.

export interface LoadOptions {
  counters: string[];
  /** Concurrent writers per router. */
  writersPerRouter: number;
  /** Fractions of a writer's calls (the rest are unkeyed increments). */
  readShare: number;
  keyedShare: number;
  /** Re-sends of a key already acknowledged: must be answered "not applied" and never count. */
  duplicateShare: number;
  deadlineMs: number;
  /** Pause between a writer's calls. */
  pauseMs: number;
  /** Keys start with it: unique per schedule. */
  keyPrefix: string;
  seed: number;
}

export type AgentCommand =
  | { cmd: 'status'; router: number; deadlineMs: number }
  | { cmd: 'increment'; router: number; counter: string; amount: string; key?: string; deadlineMs: number }
  | { cmd: 'read'; router: number; counter: string; deadlineMs: number; final?: boolean }
  | { cmd: 'globalRead'; router: number; counter: string; deadlineMs: number }
  | { cmd: 'startLoad'; options: LoadOptions }
  | { cmd: 'stopLoad' };
