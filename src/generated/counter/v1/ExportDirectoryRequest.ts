// Original file: proto/counter.proto


export interface ExportDirectoryRequest {
}

export interface ExportDirectoryRequest__Output {
}
