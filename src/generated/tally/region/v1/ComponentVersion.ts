// Original file: proto/region.proto

import type { Long } from '@grpc/proto-loader';

/**
 * A component version: (term, round), compared term first. The term is the
 * publishing router's tenure (monotone across restarts and elections); the
 * round numbers the publisher's exact reads within a term.
 */
export interface ComponentVersion {
  'term'?: (number | string | Long);
  'round'?: (number | string | Long);
}

/**
 * A component version: (term, round), compared term first. The term is the
 * publishing router's tenure (monotone across restarts and elections); the
 * round numbers the publisher's exact reads within a term.
 */
export interface ComponentVersion__Output {
  'term': (string);
  'round': (string);
}
