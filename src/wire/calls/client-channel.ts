// Channel options of every gRPC client Tally makes (the client library, the
// router to nodes, replication). Imports only grpc-js and limits: the client
// package ships this file, so no server code may come in through it.
import type { ChannelOptions } from '@grpc/grpc-js';
import { messageBytesMax } from '../checks/client-limits.ts';

/** Channel options for every Tally client: fail fast, reconnect quickly. */
export const clientChannelOptions: ChannelOptions = {
  'grpc.max_receive_message_length': messageBytesMax,
  'grpc.max_send_message_length': messageBytesMax,
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1_000,
  'grpc.min_reconnect_backoff_ms': 100,
  'grpc.keepalive_time_ms': 10_000,
  'grpc.keepalive_timeout_ms': 5_000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.enable_retries': 0,
};
