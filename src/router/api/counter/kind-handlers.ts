// CounterService's other kinds and Clear: distinct counts (AddDistinct,
// CountDistinct), membership (SetMember, IsMember) and Clear, each checked
// whole before its path is asked. Heat records their writes as it does
// increments, so distinct counters are sized like totals.
import { ErrorCode, TallyError, parseMemberId, validateCounterName, validateIdempotencyKey } from '../../../wire/index.ts';
import { countDistinctCountersMax, distinctMemberBytesMax, type counterV1 } from '../../../common/index.ts';
import { validateCounterNames, validateMemberList } from '../validation.ts';
import { handler } from '../handler.ts';
import type { CounterLifecycle } from '../../counters/index.ts';
import type { RouterMetrics } from '../../metrics/index.ts';
import type { GlobalDistinctReader } from '../../region/index.ts';
import type { HeatTracker } from '../../sizing/index.ts';
import type { DistinctPath, MembershipPath } from '../../write/index.ts';
import { validateScope, type TimedRead } from './read-handlers.ts';

/** What the kinds' handlers are handed to. */
export interface KindDeps {
  distinct: DistinctPath;
  membership: MembershipPath;
  lifecycle: CounterLifecycle;
  heat: HeatTracker;
  metrics: RouterMetrics;
  /** CountDistinct with SCOPE_GLOBAL (docs/regions.md); absent: refused. */
  globalDistinct?: Pick<GlobalDistinctReader, 'count'>;
  /** Told the counters a write or clear went to once its outcome is known (the region publisher reads them next). */
  onWritten?: (counter: string) => void;
}

export function createKindHandlers(deps: KindDeps, timedRead: TimedRead) {
  const { heat, metrics } = deps;
  // Reads change nothing: any failure of theirs is NOT_APPLIED.
  const changesNothing = true;
  return {
    AddDistinct: handler<counterV1.AddDistinctRequest__Output, counterV1.AddDistinctResponse__Output>(async (request) => {
      const name = validateCounterName(request.counter);
      const members = validateMemberList(request.members);
      members.forEach((member, index) => {
        if (member.length === 0) throw new TallyError(ErrorCode.invalidArgument, `member ${index} is empty`);
        if (member.length > distinctMemberBytesMax)
          throw new TallyError(
            ErrorCode.invalidArgument,
            `member ${index} has ${member.length} bytes; the limit is ${distinctMemberBytesMax}`,
          );
      });
      const { registersChanged, shardIndex } = await deps.distinct.add(name, members).finally(() => deps.onWritten?.(name));
      metrics.distinctMembersAdded.inc(members.length);
      // One write to one shard: heat sizes distinct counters like totals.
      heat.record(name, 1, shardIndex);
      return { registersChanged };
    }),

    CountDistinct: handler<counterV1.CountDistinctRequest__Output, counterV1.CountDistinctResponse__Output>(async (request) => {
      const names = validateCounterNames(request.counters, countDistinctCountersMax, 'CountDistinct');
      const global = validateScope(request.scope) === 'SCOPE_GLOBAL';
      const globalDistinct = deps.globalDistinct;
      if (global && globalDistinct === undefined)
        throw new TallyError(ErrorCode.failedPrecondition, 'this router cannot read distinct counters with SCOPE_GLOBAL');
      const { estimate, standardError, shardCount } = global
        ? await timedRead('global_distinct', () => globalDistinct!.count(names))
        : await timedRead('distinct', () => deps.distinct.count(names));
      return { estimate: String(estimate), standardError, shards: shardCount };
    }, changesNothing),

    SetMember: handler<counterV1.SetMemberRequest__Output, counterV1.SetMemberResponse__Output>(async (request) => {
      const name = validateCounterName(request.counter);
      const member = parseMemberId(request.member);
      const { changed, count, partition } = await deps.membership.set(name, member, request.present === true);
      metrics.memberSets.inc({ changed: String(changed) });
      // Shown by `tally top`; partitions never grow, so this only informs.
      heat.record(name, 1, partition);
      return { changed, count: (count ?? 0n).toString(), countUnavailable: count === undefined };
    }),

    Clear: handler<counterV1.ClearRequest__Output, counterV1.ClearResponse__Output>(async (request) => {
      const name = validateCounterName(request.counter);
      const key = validateIdempotencyKey(request.idempotencyKey);
      const result = await deps.lifecycle.clear(name, key).finally(() => deps.onWritten?.(name));
      return {
        counter: name,
        generation: String(result.generation),
        applied: result.applied,
        shards: result.shardCount,
        shardsPending: result.pendingCount,
      };
    }),

    IsMember: handler<counterV1.IsMemberRequest__Output, counterV1.IsMemberResponse__Output>(async (request) => {
      const name = validateCounterName(request.counter);
      const members = validateMemberList(request.members).map((member, index) => parseMemberId(member, `member ${index}`));
      return { present: await timedRead('membership', () => deps.membership.check(name, members)) };
    }, changesNothing),
  };
}
