// Builds the LD_PRELOAD shim (native/kill-mid-frame.c) that SIGKILLs a node
// between the header write and the page write of a SQLite write-ahead frame,
// and arms it. The C compiler comes with the machine (node-gyp needs it).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const source = path.join(path.dirname(fileURLToPath(import.meta.url)), 'native', 'kill-mid-frame.c');

export interface MidFrameKiller {
  /** The compiled shim, for LD_PRELOAD. */
  library: string;
  /** The environment a node starts with to carry the shim. */
  env: Record<string, string>;
  /** From now on, the node's next write-ahead frame kills it after its header. */
  arm(): void;
  disarm(): void;
  dispose(): void;
}

/** Compiles the shim into a temp dir (or `inDir`; a second or so) and returns its handle, disarmed. */
export function buildMidFrameKiller(inDir?: string): MidFrameKiller {
  const dir = inDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'tally-kill-mid-frame-'));
  fs.mkdirSync(dir, { recursive: true });
  const library = path.join(dir, 'kill-mid-frame.so');
  // Whichever C compiler the machine has (node-gyp's g++ compiles C with -x c).
  const compilers: [string, ...string[]][] = [['cc'], ['gcc'], ['g++', '-x', 'c']];
  const built = compilers.some(([compiler, ...flags]) => {
    try {
      execFileSync(compiler, [...flags, '-shared', '-fPIC', '-O1', '-o', library, source, '-ldl'], { stdio: 'pipe' });
      return true;
    } catch {
      return false;
    }
  });
  if (!built) throw new Error(`no C compiler (cc, gcc or g++) could build ${source}: install gcc`);
  const armFile = path.join(dir, 'armed');
  return {
    library,
    env: { LD_PRELOAD: library, TALLY_KILL_MID_FRAME_ARM: armFile },
    arm: () => fs.writeFileSync(armFile, ''),
    disarm: () => fs.rmSync(armFile, { force: true }),
    dispose: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
