// Original file: proto/counter.proto

/**
 * Which regions a read adds up (docs/regions.md).
 */
export const Scope = {
  /**
   * This region's own total, with today's consistency rules. The default.
   */
  SCOPE_REGION: 'SCOPE_REGION',
  /**
   * This region's total plus every peer region's last received component:
   * never exact, each part listed in ReadResponse.regions with its age.
   */
  SCOPE_GLOBAL: 'SCOPE_GLOBAL',
} as const;

/**
 * Which regions a read adds up (docs/regions.md).
 */
export type Scope =
  /**
   * This region's own total, with today's consistency rules. The default.
   */
  | 'SCOPE_REGION'
  | 0
  /**
   * This region's total plus every peer region's last received component:
   * never exact, each part listed in ReadResponse.regions with its age.
   */
  | 'SCOPE_GLOBAL'
  | 1

/**
 * Which regions a read adds up (docs/regions.md).
 */
export type Scope__Output = typeof Scope[keyof typeof Scope]
