// The TallyError a call rejects with; fails the test when the call succeeds
// or rejects with anything else.
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
