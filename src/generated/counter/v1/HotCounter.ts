// Original file: proto/counter.proto


export interface HotCounter {
  'counter'?: (string);
  'ratePerSec'?: (number | string);
  'peakPerSec'?: (number | string);
  'shards'?: (number);
  'skew'?: (number | string);
  'shardRates'?: (number | string)[];
  'autoscale'?: (boolean);
}

export interface HotCounter__Output {
  'counter': (string);
  'ratePerSec': (number);
  'peakPerSec': (number);
  'shards': (number);
  'skew': (number);
  'shardRates': (number)[];
  'autoscale': (boolean);
}
