// The channel options of the client library's connections to routers: what
// a client needs by default behind proxies and load balancers, and the
// caller's channelOptions over them. The routers' own channels to nodes keep
// the repository's options (../common/client-channel.ts).
import type { ChannelOptions } from '@grpc/grpc-js';
import { clientChannelOptions } from '../../wire/index.ts';

/**
 * Defaults a proxy with grpc-go's keepalive enforcement accepts (MinTime 5
 * minutes, no pings without calls: a faster pinger is sent GOAWAY
 * too_many_pings), and reconnects that back off to tens of seconds (grpc-js
 * jitters each delay by ±20%), so a fleet that lost its routers does not
 * return in step.
 */
export const libraryChannelDefaults: ChannelOptions = {
  ...clientChannelOptions,
  'grpc.keepalive_time_ms': 300_000,
  'grpc.keepalive_timeout_ms': 20_000,
  'grpc.keepalive_permit_without_calls': 0,
  // A router back within a second or two is found within a second (from 100 ms, x1.6 per failure); a long outage backs off to 30 s.
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.min_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 30_000,
};

/** The options a router's channel is made with: the defaults, the caller's over them, and the service config, which is Tally's. */
export function channelOptionsOf(callerOptions: ChannelOptions | undefined, serviceConfigJson: string): ChannelOptions {
  return { ...libraryChannelDefaults, ...callerOptions, 'grpc.service_config': serviceConfigJson };
}
