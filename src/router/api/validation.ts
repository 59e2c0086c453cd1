// Input checks the two services share (G7): nothing changes before the
// whole request has been validated, and a bad item is named by its place.
import {
  ErrorCode,
  TallyError,
  validateAmountNumber,
  validateCounterName,
  validateIdempotencyKey,
  type counterV1,
  type LeanIncrementRequest,
  distinctMembersMax,
} from '../../common/index.ts';
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
