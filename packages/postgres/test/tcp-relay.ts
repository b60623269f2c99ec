import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

/** A loopback TCP relay to a server, which a test cuts and restores as if the server went away and came back. */
export interface TcpRelay {
  /** The port clients connect to; the same after `restore()`. */
  readonly port: number;
  /** Closes every relayed connection and refuses new ones (ECONNREFUSED), as a killed server does. */
  cut(): Promise<void>;
  /** Accepts connections again, on the same port. */
  restore(): Promise<void>;
}

/**
 * Starts a relay from a free loopback port to `target`.
 *
 * @example
 * const relay = await startTcpRelay({ host: '127.0.0.1', port: 5432 });
 * const sql = postgres({ host: '127.0.0.1', port: relay.port });
 * await relay.cut();
 */
export async function startTcpRelay(target: { host: string; port: number }): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection(target);
    for (const [socket, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => other.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  await listen();
  return {
    get port() {
      return port;
    },
    cut: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    restore: listen,
  };
}
