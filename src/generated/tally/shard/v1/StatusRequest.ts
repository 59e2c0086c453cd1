// Original file: proto/shard.proto


export interface StatusRequest {
}

export interface StatusRequest__Output {
}
