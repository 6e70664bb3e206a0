import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { ADMIN_URL } from "./pg";

/*
 * Debian's PgBouncer in transaction mode in front of the test Postgres, as a team's managed database puts one in front
 * of theirs: each server connection serves one transaction, then another client. Started by the suite that needs it
 * (`npm run test:pooler`, e2e/pooler/run.ts); test servers then reach Postgres through it (e2e/support/server.ts reads
 * TEST_POOLER_PORT) and LISTEN directly.
 */

export const PGBOUNCER = process.env.PGBOUNCER_PATH ?? "/usr/sbin/pgbouncer";

export interface Pooler {
  port: number;
  /** What the pooler did: transactions and queries it passed on, per database (its admin console's SHOW STATS). */
  stats(): Promise<{ database: string; transactions: number; queries: number }[]>;
  /** Kill PgBouncer (SIGKILL: every client and server connection cut) and start it again on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** `url` (a direct test database URL) through the pooler at `port`. */
export function pooledUrl(url: string, port: number): string {
  const u = new URL(url);
  u.port = String(port);
  return u.toString();
}

export async function startPooler(): Promise<Pooler> {
  if (!existsSync(PGBOUNCER)) {
    throw new Error(
      `No PgBouncer at ${PGBOUNCER}: apt-get install pgbouncer (the pooler suite runs Debian's).`,
    );
  }
  const admin = new URL(ADMIN_URL);
  const dir = mkdtempSync(join(tmpdir(), "hitl-pooler-"));
  const port = await freePort();
  const user = decodeURIComponent(admin.username || "postgres");
  writeFileSync(join(dir, "users.txt"), `"${user}" ""\n`);
  writeFileSync(
    join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `* = host=${admin.hostname} port=${admin.port || "5432"}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${join(dir, "users.txt")}`,
      `admin_users = ${user}`,
      "pool_mode = transaction",
      "max_client_conn = 2000",
      "default_pool_size = 40",
      // Start-up settings a client may send that a transaction pooler cannot keep for it.
      "ignore_startup_parameters = extra_float_digits,options,statement_timeout",
      "logfile =",
      "pidfile =",
      "",
    ].join("\n"),
  );
  // PgBouncer refuses to run as root: as root it drops to `nobody`, which must read its files.
  chmodSync(dir, 0o755);
  chmodSync(join(dir, "users.txt"), 0o644);
  chmodSync(join(dir, "pgbouncer.ini"), 0o644);
  const asRoot = process.getuid?.() === 0;
  let output = "";
  const launch = (): ChildProcess => {
    const started = spawn(PGBOUNCER, [...(asRoot ? ["-u", "nobody"] : []), join(dir, "pgbouncer.ini")], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    started.stdout?.on("data", (d) => {
      output = (output + d).slice(-20_000);
    });
    started.stderr?.on("data", (d) => {
      output = (output + d).slice(-20_000);
    });
    return started;
  };
  let child = launch();
  const url = pooledUrl(ADMIN_URL, port);
  await answering(
    () => child,
    url,
    () => output,
  );
  const console_ = () => {
    const u = new URL(url);
    u.pathname = "/pgbouncer";
    return u.toString();
  };
  const kill = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill(signal);
    await Promise.race([exited, new Promise((r) => setTimeout(r, 3_000))]);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exited;
    }
  };
  return {
    port,
    async restart() {
      await kill("SIGKILL");
      // The port is free once the process is gone; a new PgBouncer takes it (and the same configuration).
      child = launch();
      await answering(
        () => child,
        url,
        () => output,
      );
    },
    async stats() {
      const client = new pg.Client({ connectionString: console_() });
      await client.connect();
      try {
        // The admin console speaks the simple protocol only: a query without parameters.
        const result = await client.query<Record<string, string>>("SHOW STATS");
        return result.rows.map((r) => ({
          database: String(r.database),
          transactions: Number(r.total_xact_count),
          queries: Number(r.total_query_count),
        }));
      } finally {
        await client.end();
      }
    },
    async stop() {
      await kill("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Wait until PgBouncer at `url` answers a query (15 s at most), or throw with its output. */
async function answering(child: () => ChildProcess, url: string, output: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const process_ = child();
    if (process_.exitCode !== null) throw new Error(`pgbouncer exited (${process_.exitCode}):\n${output()}`);
    const client = new pg.Client({ connectionString: url });
    client.on("error", () => {});
    try {
      await client.connect();
      await client.query("SELECT 1");
      await client.end();
      break;
    } catch {
      await client.end().catch(() => {});
      if (Date.now() > deadline) throw new Error(`pgbouncer did not answer in 15 s:\n${output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
