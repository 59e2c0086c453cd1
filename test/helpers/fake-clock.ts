// A wall clock a test can step, for one process: libfaketime (Debian's
// `faketime` package) preloaded, reading its offset from a file the test
// rewrites. Monotonic time is left alone (DONT_FAKE_MONOTONIC), as NTP would:
// a step moves Date.now(), never performance.now(). Needs the package: a test
// using it fails, naming the package, without it.
import fs from 'node:fs';
import path from 'node:path';

const libraryPaths = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1', '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1'];

/** The preloadable libfaketime, or an error naming the Debian package. */
export function fakeTimeLibrary(): string {
  const found = libraryPaths.find((candidate) => fs.existsSync(candidate));
  if (found === undefined) throw new Error('libfaketime is missing: apt-get install faketime');
  return found;
}

export interface FakeClock {
  /** Environment to start the process with (merge into its env). */
  env: Record<string, string>;
  /** Moves the process's wall clock to real time + offsetMs (negative: back). Takes effect at once. */
  setOffsetMs(offsetMs: number): void;
  /** The current offset from real time. */
  offsetMs(): number;
}

/** A clock file in dir (one per process); starts at real time. */
export function makeFakeClock(dir: string, name: string): FakeClock {
  const file = path.join(dir, `${name}.faketime`);
  let currentOffsetMs = 0;
  const write = (offsetMs: number) => {
    // libfaketime's relative form: "+<seconds>" (fractions allowed), read at every call (FAKETIME_NO_CACHE).
    const seconds = (offsetMs / 1000).toFixed(3);
    fs.writeFileSync(`${file}.tmp`, `${offsetMs >= 0 ? '+' : ''}${seconds}\n`);
    fs.renameSync(`${file}.tmp`, file);
    currentOffsetMs = offsetMs;
  };
  write(0);
  return {
    env: {
      LD_PRELOAD: fakeTimeLibrary(),
      FAKETIME_TIMESTAMP_FILE: file,
      FAKETIME_NO_CACHE: '1',
      DONT_FAKE_MONOTONIC: '1',
    },
    setOffsetMs: write,
    offsetMs: () => currentOffsetMs,
  };
}
