// Tests only: TALLY_RELAY_TEST_HOOK makes the relay die or pause at one of
// its crash windows, so a test can hit them on purpose rather than by luck.
// Unset in production; an unknown value is ignored, never guessed at.
//   exit-before-send   SIGKILL itself after stamping a batch's first sends, before sending
//   exit-after-ack     SIGKILL itself after Tally acknowledged a batch, before the commit
//   pause-after-ack:MS print a line and wait MS after the acknowledgement, before the commit

export type HookPoint = 'before-send' | 'after-ack';

const hook = process.env.TALLY_RELAY_TEST_HOOK ?? '';

export async function testHook(point: HookPoint, rowCount: number): Promise<void> {
  if (hook === '' || rowCount === 0) return;
  if (hook === `exit-${point}`) {
    process.stderr.write(`relay test hook: exit ${point} (${rowCount} rows)\n`);
    process.kill(process.pid, 'SIGKILL');
    await new Promise(() => {});
  }
  const pause = /^pause-after-ack:(\d+)$/.exec(hook);
  if (pause !== null && point === 'after-ack') {
    process.stderr.write(`relay test hook: acknowledged ${rowCount} rows, pausing before the commit\n`);
    await new Promise((resolve) => setTimeout(resolve, Number(pause[1])));
  }
}
