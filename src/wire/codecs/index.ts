// The lean codecs of counter.v1's hot path (Increment, IncrementBatch,
// ReadMany and their streams), request and response, read and written from
// one definition per message and held byte-equal to protobufjs; and the
// RegionPart message they embed. The client ships these files: no gRPC
// server code and no internal format here.
export * from './counter-codec.ts';
export * from './region-part-codec.ts';
