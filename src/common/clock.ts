// The two clocks a process reads. Durations, timeouts, leases, idle times and
// lags use the monotonic one: NTP steps the wall clock by hours either way,
// never this one. The wall clock is for timestamps that are stored or shown.

/** Milliseconds on the monotonic clock (an arbitrary origin per process): for durations only. */
export function monotonicNowMs(): number {
  return performance.now();
}

/** A clock a component reads, injected so tests can move it. */
export type MonotonicClock = () => number;
