// The client's connection state over all its routers' channels, as events:
// 'ready' while any router is connected, 'connecting' while none is and one
// is trying, 'transient_failure' while every router is failing, 'idle'
// before anything was asked of them, 'closed' after close(). Watching starts
// on first interest (an 'state' listener or ready()), costs no timer, and
// ends with the channels.
import { connectivityState, type ChannelInterface } from '@grpc/grpc-js';

export type ConnectionState = 'idle' | 'connecting' | 'ready' | 'transient_failure' | 'closed';

/** One state for several channels: the best any of them is in. */
export function aggregateState(states: readonly connectivityState[]): ConnectionState {
  if (states.includes(connectivityState.READY)) return 'ready';
  if (states.includes(connectivityState.CONNECTING)) return 'connecting';
  if (states.includes(connectivityState.IDLE)) return 'idle';
  if (states.includes(connectivityState.TRANSIENT_FAILURE)) return 'transient_failure';
  return 'closed';
}

export class ConnectionWatch {
  private watching = false;
  private closed = false;
  private last: ConnectionState;

  constructor(
    private readonly channels: readonly ChannelInterface[],
    private readonly onChange: (state: ConnectionState) => void,
  ) {
    this.last = this.read();
  }

  /** The state now (without asking an idle channel to connect). */
  get state(): ConnectionState {
    return this.closed ? 'closed' : this.read();
  }

  /** Starts following every channel, and asks idle ones to connect. */
  start(connect: boolean): void {
    if (this.closed) return;
    if (connect) for (const channel of this.channels) channel.getConnectivityState(true);
    if (!this.watching) {
      this.watching = true;
      for (const channel of this.channels) this.follow(channel);
    }
    this.changed();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.last = 'closed';
    this.onChange('closed');
  }

  private read(): ConnectionState {
    return aggregateState(this.channels.map((channel) => channel.getConnectivityState(false)));
  }

  private follow(channel: ChannelInterface): void {
    const state = channel.getConnectivityState(false);
    if (this.closed || state === connectivityState.SHUTDOWN) return;
    // No deadline: no timer holds the process open; close() ends the watch with SHUTDOWN.
    channel.watchConnectivityState(state, Infinity, () => {
      this.changed();
      this.follow(channel);
    });
  }

  private changed(): void {
    if (this.closed) return;
    const state = this.read();
    if (state === this.last) return;
    this.last = state;
    this.onChange(state);
  }
}
