// Original file: proto/counter.proto


export interface ClusterStatusRequest {
}

export interface ClusterStatusRequest__Output {
}
