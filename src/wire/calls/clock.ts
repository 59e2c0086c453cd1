// The two clocks a process reads. Durations, timeouts, leases, idle times and
// lags use the monotonic one: NTP steps the wall clock by hours either way,
// never this one. The wall clock is for timestamps that are stored or shown.

/** Milliseconds on the monotonic clock (an arbitrary origin per process): for durations only. */
export function monotonicNowMs(): number {
  return performance.now();
}

/** A clock a component reads, injected so tests can move it. */
export type MonotonicClock = () => number;

/**
 * A wall clock that a step cannot move while the process runs: anchored at
 * start at max(the wall clock, floorMs), then advanced only by the monotonic
 * clock. For wall-clock times that a decision compares later, such as the
 * time a log entry is stamped with and the dedup window measured against it:
 * NTP stepping the wall clock by hours either way changes nothing it returns.
 * floorMs is the newest such time already stored (the log's last entry), so
 * after a restart on a clock that went back, times do not go back with it.
 * What it cannot know: a step while the process was down looks like downtime
 * (forward) or is absorbed by the floor (back).
 */
export function steadyWallClock(
  floorMs = Number.NEGATIVE_INFINITY,
  // eslint-disable-next-line no-restricted-properties -- the anchor of the steady clock: read once, at start
  wallNow: () => number = () => Date.now(),
  monotonicNow: MonotonicClock = monotonicNowMs,
): () => number {
  const anchorMs = Math.max(wallNow(), floorMs);
  const monotonicAtStartMs = monotonicNow();
  return () => Math.round(anchorMs + (monotonicNow() - monotonicAtStartMs));
}

/**
 * A gRPC (or etcd) call deadline timeoutMs from now. Their APIs take a
 * deadline as a wall-clock time and turn it back into a timeout at once, so
 * a step of the wall clock matters only within that instant.
 */
export function deadlineIn(timeoutMs: number): number {
  // eslint-disable-next-line no-restricted-properties -- a call deadline is a wall-clock time by the gRPC API, used at once
  return Date.now() + timeoutMs;
}
