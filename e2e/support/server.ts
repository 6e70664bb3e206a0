import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { authEnv, registerServer } from "./auth";
import { pooledUrl } from "./pooler";

/** A free loopback port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

export interface TestServer {
  url: string;
  port: number;
  /** The server's pid; it leads its own process group (next-server's workers are in it too). */
  pid: number;
  /** Output so far (for failure messages). */
  log(): string;
  /** SIGKILL the whole process group: a crash. */
  kill(): Promise<void>;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
  /** Send SIGTERM to the process group without waiting (a deploy's stop). */
  terminate(): void;
  /** Resolves with the time (Date.now()) the server process exited. */
  exited: Promise<number>;
}

/** With TEST_POOLER_PORT (e2e/pooler/run.ts), a Postgres URL goes through the pooler and LISTEN goes direct. */
function poolerEnv(databaseUrl: string): Record<string, string> {
  const port = process.env.TEST_POOLER_PORT;
  if (!port || !databaseUrl.startsWith("postgres")) return {};
  return {
    DATABASE_URL: pooledUrl(databaseUrl, Number(port)),
    DATABASE_LISTEN_URL: databaseUrl,
    DATABASE_POOLER: "transaction",
  };
}

/**
 * Start the production server (`next start`, built by `npm run build`) on a free port against `databaseUrl`, and
 * wait until /api/health answers 200. It runs in its own process group so a kill takes next-server down with it.
 */
export async function startTestServer(options: {
  databaseUrl: string;
  port?: number;
  env?: Record<string, string>;
  /** Create and sign in the test users (default). */
  signIn?: boolean;
  /** Wait until /api/health answers 200 (default), or only until the server answers at all (e.g. 503). */
  waitFor?: "healthy" | "listening";
  /** The app tree to serve (default: this one), e.g. another version of the app built elsewhere. */
  cwd?: string;
  /** A command the server runs under, e.g. `["unshare", "--pid", "--fork", …]` (its own pid namespace). */
  wrap?: string[];
}): Promise<TestServer> {
  const root = options.cwd ?? process.cwd();
  // The build the server will read: NEXT_DIST_DIR as the server gets it (options.env wins over this process's).
  const distDir =
    (options.env && "NEXT_DIST_DIR" in options.env ? options.env.NEXT_DIST_DIR : process.env.NEXT_DIST_DIR) ||
    ".next";
  if (!existsSync(join(root, distDir, "BUILD_ID"))) {
    throw new Error("No production build: run `npm run build` first (npm test does it).");
  }
  const port = options.port ?? (await freePort());
  let output = "";
  const nextArgs = [
    join(root, "node_modules", ".bin", "next"),
    "start",
    "-p",
    String(port),
    "-H",
    "127.0.0.1",
  ];
  const [command, ...args] = [...(options.wrap ?? []), ...nextArgs] as [string, ...string[]];
  const child: ChildProcess = spawn(command, args, {
    cwd: root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      // Not the test runner's flags: libraries that relax their checks under a test runner (better-auth does)
      // must behave here as they do in production.
      ...withoutTestFlags(process.env),
      NODE_ENV: "production",
      NEXT_TELEMETRY_DISABLED: "1",
      DATABASE_URL: options.databaseUrl,
      // The pooler suite (npm run test:pooler): every test server reaches Postgres through PgBouncer in transaction
      // mode and LISTENs on a direct connection, as a team behind a managed database's pooler would run it.
      ...poolerEnv(options.databaseUrl),
      // Test servers pay and mail through the simulators unless a test gives PAYMENT_URL / SMTP_URL: said, not implied.
      PAYMENT_SIMULATED: "1",
      EMAIL_SIMULATED: "1",
      OPENAI_API_KEY: "",
      OFFLINE_TOKEN_DELAY_MS: "0",
      DEMO_THREADS: "false",
      // Retention runs on its own only where a test turns it on (e2e/api/retention-schedule): its audit entries and
      // deletions would otherwise land in the middle of tests that compare rows.
      RETENTION_SCHEDULE: "off",
      // Likewise the operations page's queue sampler: its sample of the minute is a row written by the clock, which
      // lands between two row counts now and then (the policy matrix's "refusals write nothing" failed so once in
      // CI). One sample at start, the next in an hour; e2e/operations.spec.ts sets its own interval.
      OPS_SAMPLE_INTERVAL_MS: "3600000",
      // Two test files run at once on one Postgres (max_connections 100), each with servers of its own: a test server's
      // checkpointer pool is kept small. lib/db/checkpoint-pool.int.test.ts tests the pool itself.
      CHECKPOINT_POOL_MAX: "4",
      // For the same reason a test server gives back its idle connections after pg's 10 s, not after minutes.
      DATABASE_POOL_IDLE_MS: "10000",
      ...authEnv(),
      ...options.env,
    },
  });
  child.stdout?.on("data", (d) => {
    output += d;
  });
  child.stderr?.on("data", (d) => {
    output += d;
  });
  const exited = new Promise<number>((resolve) => child.once("exit", () => resolve(Date.now())));
  const url = `http://127.0.0.1:${port}`;
  const send = (sig: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-(child.pid as number), sig);
    } catch {
      // already gone
    }
  };
  const signal = async (sig: NodeJS.Signals) => {
    send(sig);
    await exited;
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}):\n${output}`);
    try {
      const res = await fetch(`${url}/api/health`);
      if (res.status === 200 || options.waitFor === "listening") break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await signal("SIGKILL");
      throw new Error(`server did not become healthy in 60 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  const server = {
    url,
    port,
    pid: child.pid as number,
    log: () => output,
    kill: () => signal("SIGKILL"),
    stop: () => signal("SIGTERM"),
    terminate: () => send("SIGTERM"),
    exited,
  };
  if (options.signIn !== false) await registerServer(url, options.databaseUrl);
  return server;
}

function withoutTestFlags(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const {
    TEST: _test,
    VITEST: _vitest,
    VITEST_MODE: _mode,
    VITEST_POOL_ID: _pool,
    VITEST_WORKER_ID: _worker,
    ...rest
  } = env;
  return rest;
}
