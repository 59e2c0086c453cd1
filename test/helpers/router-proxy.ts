// Stand-ins for routers a client cannot or can no longer reach: a loopback
// port nothing listens on, and a TCP proxy to a live router that can drop
// every connection at once (a router lost with calls in flight) while the
// router behind it lives on and has applied what it received.
import net from 'node:net';

/** A loopback port nothing listens on: connecting is refused. */
export async function deadAddress(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `127.0.0.1:${port}`;
}

export interface RouterProxy {
  /** host:port of the proxy: to a client, another router. */
  address: string;
  /**
   * Destroys every proxied connection and stops listening: calls in flight
   * through it fail UNAVAILABLE, though the router may have applied them
   * (their answers are held back by answerDelayMs), and later connections
   * are refused.
   */
  kill(): Promise<void>;
}

/**
 * A proxy to target that holds each answer back by answerDelayMs, so that at
 * any moment calls the router has already applied are still unanswered.
 */
export async function startRouterProxy(target: string, answerDelayMs: number): Promise<RouterProxy> {
  const colon = target.lastIndexOf(':');
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.slice(colon + 1)), target.slice(0, colon));
    sockets.add(client).add(upstream);
    client.pipe(upstream);
    // Equal delays fire in order: the byte stream stays intact.
    upstream.on('data', (chunk) => setTimeout(() => client.destroyed || client.write(chunk), answerDelayMs));
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return {
    address,
    async kill() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

export interface StallableProxy {
  address: string;
  /** Every connection open now stops carrying bytes either way, as a blackhole does, and stays open; later connections work. */
  stall(): void;
  kill(): Promise<void>;
}

/** A proxy to target whose connections can be stalled (a silent blackhole of the connections open at that moment). */
export async function startStallableProxy(target: string): Promise<StallableProxy> {
  const colon = target.lastIndexOf(':');
  const live = new Set<{ stalled: boolean; sockets: net.Socket[] }>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.slice(colon + 1)), target.slice(0, colon));
    const connection = { stalled: false, sockets: [client, upstream] };
    live.add(connection);
    client.on('data', (chunk) => connection.stalled || upstream.write(chunk));
    upstream.on('data', (chunk) => connection.stalled || client.write(chunk));
    const close = () => {
      client.destroy();
      upstream.destroy();
      live.delete(connection);
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    stall() {
      for (const connection of live) connection.stalled = true;
    },
    async kill() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const connection of live) for (const socket of connection.sockets) socket.destroy();
      await closed;
    },
  };
}
