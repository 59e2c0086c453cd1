// The node's rule for orders (SetRole): an order the directory has superseded
// is never obeyed. Table-driven over the current role and the order.
import { describe, expect, it } from 'vitest';
import { refusalOf, type RoleOrder, type RoleState } from '../../../../src/node/state/node-role.ts';

const obeyed: RoleState = { role: 'primary', epoch: 4n, peer: 'f:1', syncRequired: true, epochStartLsn: 10n, configVersion: 12n };
const order = (overrides: Partial<RoleOrder> = {}): RoleOrder => ({
  role: 'primary',
  epoch: 4n,
  peer: 'f:1',
  syncRequired: true,
  configVersion: 12n,
  ...overrides,
});

describe('node role orders', () => {
  const cases: { name: string; current?: RoleState; order: RoleOrder; refused: RegExp | undefined }[] = [
    { name: 'the same order again (a retry) is obeyed', order: order(), refused: undefined },
    { name: 'a lower version is refused, even at the same epoch', order: order({ configVersion: 11n }), refused: /superseded order/ },
    {
      name: 'a lower version is refused even when it would only require sync',
      current: { ...obeyed, syncRequired: false },
      order: order({ configVersion: 11n }),
      refused: /superseded order/,
    },
    {
      name: 'dropping sync at the version already obeyed is refused (a deposed supervisor paused before its order)',
      order: order({ syncRequired: false }),
      refused: /already requires sync/,
    },
    {
      name: 'requiring sync at the version already obeyed is obeyed (markInSync before the directory records it)',
      current: { ...obeyed, syncRequired: false },
      order: order(),
      refused: undefined,
    },
    { name: 'dropping sync at a newer version is obeyed', order: order({ syncRequired: false, configVersion: 13n }), refused: undefined },
    { name: 'another role at the same version is refused', order: order({ role: 'follower', syncRequired: false }), refused: /superseded/ },
    { name: 'another peer at the same version is refused', order: order({ peer: 'x:1' }), refused: /superseded/ },
    { name: 'an older epoch is refused whatever its version', order: order({ epoch: 3n, configVersion: 99n }), refused: /stale epoch/ },
    { name: 'a newer epoch at a newer version is obeyed (failover)', order: order({ epoch: 5n, configVersion: 14n }), refused: undefined },
    {
      name: 'an unversioned order (a router before versions) is refused by a node that obeyed a version',
      order: order({ syncRequired: false, configVersion: 0n }),
      refused: /without a configuration version .* obeyed version 12, .* cannot be told from a superseded one; upgrade every router/,
    },
    {
      name: 'unversioned on both sides: the epoch rule alone',
      current: { ...obeyed, configVersion: 0n },
      order: order({ syncRequired: false, configVersion: 0n }),
      refused: undefined,
    },
  ];
  for (const testCase of cases) {
    it(`${testCase.name}`, () => {
      const refusal = refusalOf(testCase.current ?? obeyed, testCase.order);
      if (testCase.refused === undefined) expect(refusal).toBeUndefined();
      else expect(refusal).toMatch(testCase.refused);
    });
  }
});
