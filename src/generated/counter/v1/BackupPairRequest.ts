// Original file: proto/counter.proto


export interface BackupPairRequest {
  'pair'?: (number);
}

export interface BackupPairRequest__Output {
  'pair': (number);
}
