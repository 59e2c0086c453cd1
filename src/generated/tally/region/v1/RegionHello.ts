// Original file: proto/region.proto


export interface RegionHello {
  /**
   * The sending region (its --region).
   */
  'originRegion'?: (string);
  /**
   * The region the sender believes it is talking to: a receiver of another
   * name refuses the stream (FAILED_PRECONDITION), so a misconfigured
   * address never stores components under the wrong name.
   */
  'targetRegion'?: (string);
}

export interface RegionHello__Output {
  /**
   * The sending region (its --region).
   */
  'originRegion': (string);
  /**
   * The region the sender believes it is talking to: a receiver of another
   * name refuses the stream (FAILED_PRECONDITION), so a misconfigured
   * address never stores components under the wrong name.
   */
  'targetRegion': (string);
}
