// Original file: proto/counter.proto


export interface ExportDirectoryResponse {
  /**
   * UTF-8 JSON, format "tally-directory" as tally directory export writes
   * it: the pieces of the stream, concatenated in order, are the document.
   */
  'directoryJson'?: (Buffer | Uint8Array | string);
}

export interface ExportDirectoryResponse__Output {
  /**
   * UTF-8 JSON, format "tally-directory" as tally directory export writes
   * it: the pieces of the stream, concatenated in order, are the document.
   */
  'directoryJson': (Buffer);
}
