// The TallyError a call rejects with (or, for a synchronous call, the code it
// throws); fails the test when the call succeeds or fails with anything else.
import { expect } from 'vitest';
import { TallyError } from '../../src/client/index.ts';

export async function rejection(call: Promise<unknown>): Promise<TallyError> {
  const outcome = await call.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(TallyError);
  return outcome as TallyError;
}

/** The TallyError code `action` throws, or 'no error'. */
export function codeOf(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    if (error instanceof TallyError) return error.code;
    throw error;
  }
  return 'no error';
}

/** The TallyError code `action` throws or rejects with, or 'no error'. */
export async function codeOfAsync(action: () => unknown): Promise<string> {
  try {
    await action();
  } catch (error) {
    if (error instanceof TallyError) return error.code;
    throw error;
  }
  return 'no error';
}
