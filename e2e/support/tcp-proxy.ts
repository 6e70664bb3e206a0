import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy on 127.0.0.1 between a server and Postgres, so a test can make "the database" unreachable without
 * touching the machine's shared PostgreSQL. While refusing, every connection is accepted and closed at once (the
 * client sees its connection end before the startup message, as when Postgres is down or restarting); `forward()`
 * starts piping new connections to the target; `refuse()` also cuts the connections already open.
 */
export interface TcpProxy {
  port: number;
  /** `databaseUrl` with its host and port replaced by the proxy's. */
  urlFor(databaseUrl: string): string;
  forward(): void;
  refuse(): void;
  /**
   * Send new connections to another target from now on, cutting the open ones (a managed database's address moving to
   * the new primary after a failover), and forward.
   */
  retarget(target: { host: string; port: number }): void;
  /** Connections accepted so far while refusing (each one a connection attempt that failed). */
  refused(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(initial: { host: string; port: number }): Promise<TcpProxy> {
  let target = initial;
  let forwarding = false;
  let refusedCount = 0;
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    client.on("error", () => {});
    if (!forwarding) {
      refusedCount += 1;
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  if (typeof address !== "object" || !address) throw new Error("proxy: no address");
  const port = address.port;
  return {
    port,
    urlFor(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = "127.0.0.1";
      url.port = String(port);
      return url.toString();
    },
    forward() {
      forwarding = true;
    },
    refuse() {
      forwarding = false;
      for (const socket of open) socket.destroy();
      open.clear();
    },
    retarget(next) {
      for (const socket of open) socket.destroy();
      open.clear();
      target = next;
      forwarding = true;
    },
    refused: () => refusedCount,
    close() {
      forwarding = false;
      for (const socket of open) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
