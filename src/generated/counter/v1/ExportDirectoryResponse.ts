// Original file: proto/counter.proto


export interface ExportDirectoryResponse {
  /**
   * JSON: format "tally-directory", as tally directory export writes it.
   */
  'directoryJson'?: (string);
}

export interface ExportDirectoryResponse__Output {
  /**
   * JSON: format "tally-directory", as tally directory export writes it.
   */
  'directoryJson': (string);
}
