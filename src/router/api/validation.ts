// Input checks the two services share (G7): nothing changes before the
// whole request has been validated, and a bad item is named by its place.
import {
  ErrorCode,
  TallyError,
  validateAmountNumber,
  validateCounterName,
  validateIdempotencyKey,
  type IncrementColumns,
  type LeanIncrementRequest,
} from '../../wire/index.ts';
import { type counterV1, distinctMembersMax } from '../../common/index.ts';
import { type ValidIncrement } from '../write/index.ts';

/**
 * `request`: as the lean codec decodes it (amount a number or bigint), or as
 * proto-loader does (a decimal string); the checks and errors are the same.
 * `itemIndex`: the item's place in a batch, named in an error (-1: unary).
 * `validName`: a name already validated in this call; the same name is not checked again.
 */
export function validateIncrement(
  request: LeanIncrementRequest | counterV1.IncrementRequest__Output,
  itemIndex = -1,
  validName = '',
): ValidIncrement {
  try {
    return {
      counter: request.counter === validName && validName !== '' ? validName : validateCounterName(request.counter),
      amount: validateAmountNumber(request.amount),
      idempotencyKey: validateIdempotencyKey(request.idempotencyKey),
    };
  } catch (error) {
    if (error instanceof TallyError && itemIndex >= 0) throw new TallyError(error.code, `item ${itemIndex}: ${error.message}`);
    throw error;
  }
}

/**
 * A batch's columns checked in place, as validateIncrement checks each item
 * (the same words, the item named by its place): names, amounts and keys
 * made valid where the wire's form differs, nothing allocated per item. A
 * run of one name is checked once.
 */
export function validateColumns(columns: IncrementColumns): void {
  const { counters, amounts, keys } = columns;
  let validName = '';
  for (let index = 0; index < counters.length; index++) {
    try {
      const name = counters[index]!;
      if (name !== validName || validName === '') validName = validateCounterName(name);
      const amount = amounts[index]!;
      // A nonzero safe integer is what validateAmountNumber returns unchanged: the common case skips the call.
      if (typeof amount !== 'number' || amount === 0 || !Number.isSafeInteger(amount)) amounts[index] = validateAmountNumber(amount);
      const key = keys[index]!;
      if (key.length > 0) keys[index] = validateIdempotencyKey(key);
    } catch (error) {
      if (error instanceof TallyError) throw new TallyError(error.code, `item ${index}: ${error.message}`);
      throw error;
    }
  }
}

export function rejectReason(error: unknown): string {
  return error instanceof TallyError ? error.code : 'internal';
}

/** 1..distinctMembersMax members: the one bound of AddDistinct and IsMember. */
export function validateMemberList<T>(members: readonly T[]): readonly T[] {
  if (members.length === 0) throw new TallyError(ErrorCode.invalidArgument, 'no members given');
  if (members.length > distinctMembersMax)
    throw new TallyError(ErrorCode.resourceExhausted, `${members.length} members in one call; the limit is ${distinctMembersMax}`);
  return members;
}

/** 1..limit valid counter names; a bad one is named by its position. */
export function validateCounterNames(counters: readonly string[], limit: number, rpc: string): string[] {
  if (counters.length === 0) throw new TallyError(ErrorCode.invalidArgument, 'no counters named');
  if (counters.length > limit)
    throw new TallyError(ErrorCode.resourceExhausted, `${rpc} of ${counters.length} counters; the limit is ${limit}`);
  return counters.map((name, index) => {
    try {
      return validateCounterName(name);
    } catch (error) {
      throw new TallyError((error as TallyError).code, `counter ${index}: ${(error as Error).message}`);
    }
  });
}
