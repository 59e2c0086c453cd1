// Original file: proto/counter.proto

export const AutoscaleMode = {
  AUTOSCALE_UNCHANGED: 'AUTOSCALE_UNCHANGED',
  AUTOSCALE_ON: 'AUTOSCALE_ON',
  AUTOSCALE_OFF: 'AUTOSCALE_OFF',
} as const;

export type AutoscaleMode =
  | 'AUTOSCALE_UNCHANGED'
  | 0
  | 'AUTOSCALE_ON'
  | 1
  | 'AUTOSCALE_OFF'
  | 2

export type AutoscaleMode__Output = typeof AutoscaleMode[keyof typeof AutoscaleMode]
