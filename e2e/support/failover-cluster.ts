import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { appendFile, chmod, chown, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy";

/**
 * A PostgreSQL primary with one synchronous streaming standby, started from Debian's server binaries under a fresh
 * temp folder, behind a stable address (a TCP proxy) that moves to the new primary after a promotion — the way a
 * managed database's DNS name does. Tests use it to kill the primary mid-run and check that whatever a commit
 * answered survives the failover.
 */
export interface FailoverCluster {
  /** postgres://postgres@127.0.0.1:<proxyPort>/<db> — the stable address */
  url(database?: string): string;
  /** direct URLs for assertions */
  primaryUrl(database?: string): string;
  proxyPort: number;
  /** stop the current primary hard: pg_ctl stop -m immediate, then SIGKILL of its postmaster pid if still alive; the proxy refuses meanwhile */
  killPrimary(): Promise<void>;
  /** pg_ctl promote the standby, wait until it accepts writes (SELECT pg_is_in_recovery() = false), retarget the proxy to it; returns ms from promote call to writable */
  promote(): Promise<number>;
  /** after a promotion, rebuild a new synchronous standby from the new primary (fresh pg_basebackup into a new folder) so the next failover can happen; wait until sync */
  rebuildStandby(): Promise<void>;
  /** createdb on the current primary (through SQL CREATE DATABASE) */
  createDatabase(name: string): Promise<void>;
  /** stops everything, removes temp folder */
  stop(): Promise<void>;
  /** tail of both server logs for failure messages */
  logs(): string;
}

const run = promisify(execFile);

/** The name the synchronous standby reports, and the one the primary waits for. */
const STANDBY_NAME = "standby1";
const BASE_DIR = "/usr/lib/postgresql";
/** Bound on any single server command (initdb, pg_basebackup, pg_ctl …) and on each wait below. */
const COMMAND_TIMEOUT_MS = 60_000;
const WAIT_TIMEOUT_MS = 30_000;

/** The highest installed `/usr/lib/postgresql/<ver>/bin` with the server tools in it, or null when none is installed. */
export function failoverBinaries(): string | null {
  let versions: string[];
  try {
    versions = readdirSync(BASE_DIR).filter((name) => /^\d+(\.\d+)?$/.test(name));
  } catch {
    return null;
  }
  versions.sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const bin = join(BASE_DIR, version, "bin");
    const tools = ["initdb", "pg_ctl", "pg_basebackup", "postgres"];
    if (tools.every((tool) => existsSync(join(bin, tool)))) return bin;
  }
  return null;
}

/** One server's data folder, port and log file; `live` while its postmaster may be running. */
interface Node {
  name: string;
  dir: string;
  port: number;
  log: string;
  live: boolean;
}

/** A TCP port on 127.0.0.1 nobody listens on right now (the OS picks it; a race with another process is unlikely). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no free port")),
      );
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The last `lines` lines of a file, or a note that it is missing. */
function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

/**
 * Whether `pid` is a PostgreSQL server process (and, given `dir`, the postmaster of that data folder), from its
 * command line; where /proc cannot tell, trust the caller.
 */
function isServerProcess(pid: number, dir?: string): boolean {
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
  } catch {
    return true;
  }
  if (!cmdline.includes("postgres")) return false;
  return dir === undefined || cmdline.includes(dir);
}

/** Whether a process exists and is not a zombie (PID 1 here need not reap the postmasters it inherits). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return true;
  }
}

/** Pids whose parent is `pid` (the postmaster's backends and helpers), from /proc; empty where /proc is missing. */
function childPids(pid: number): number[] {
  const children: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return children;
  }
  for (const entry of entries) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return children;
}

/** The postmaster pid from the data folder's postmaster.pid, or null when the file is gone. */
function postmasterPid(dir: string): number | null {
  try {
    const pid = Number(readFileSync(join(dir, "postmaster.pid"), "utf8").split("\n")[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Environment for the server tools: no PG* variables of the caller's that could point them elsewhere. */
function toolEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LC_ALL: "C" };
  for (const key of Object.keys(env)) if (key.startsWith("PG")) delete env[key];
  return env;
}

/** Where runuser lives on Debian (util-linux), so a stripped PATH does not matter. */
function runuserPath(): string {
  return (
    ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"].find((path) => existsSync(path)) ?? "runuser"
  );
}

/** Start a primary and a synchronous standby, and the stable address in front of them. */
export async function startFailoverCluster(
  options: { maxConnections?: number } = {},
): Promise<FailoverCluster> {
  const bin = failoverBinaries();
  if (!bin)
    throw new Error(`failover cluster: no PostgreSQL server binaries under ${BASE_DIR}/<version>/bin`);
  const maxConnections = options.maxConnections ?? 100;
  // initdb and postgres refuse to run as root: run them as the postgres system user, in a folder it owns.
  const asRoot = process.getuid?.() === 0;
  let owner: { uid: number; gid: number } | null = null;
  if (asRoot) {
    const { stdout: uid } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    owner = { uid: Number(uid.trim()), gid: Number(gid.trim()) };
  }
  const root = await mkdtemp(join(tmpdir(), "pg-failover-"));
  await chmod(root, 0o700);
  if (owner) await chown(root, owner.uid, owner.gid);

  const nodes: Node[] = [];
  let primary: Node | null = null;
  let standby: Node | null = null;
  let proxy: TcpProxy | null = null;
  let stopped = false;

  const logs = () =>
    nodes.map((node) => `--- ${node.name} (port ${node.port}) ${node.log}\n${tail(node.log)}`).join("\n");

  /** Run one of the server tools (as postgres when we are root); the error names the command and the log tails. */
  const tool = async (name: string, args: string[], timeoutMs = COMMAND_TIMEOUT_MS): Promise<string> => {
    const path = join(bin, name);
    const [file, argv] = asRoot ? [runuserPath(), ["-u", "postgres", "--", path, ...args]] : [path, args];
    try {
      const { stdout } = await run(file, argv, {
        cwd: root,
        env: toolEnv(),
        timeout: timeoutMs,
        killSignal: "SIGKILL",
        maxBuffer: 16 * 1024 * 1024,
      });
      return stdout;
    } catch (error) {
      const e = error as Error & { stderr?: string; killed?: boolean };
      // execFile's message already carries stderr, except when it killed the command for taking too long.
      const why = e.killed ? `timed out after ${timeoutMs} ms\n${e.stderr ?? ""}` : e.message;
      throw new Error(`failover cluster: ${name} ${args.join(" ")} failed: ${why.trimEnd()}\n${logs()}`);
    }
  };

  /** A file we write into a data folder must stay readable by the server user. */
  const writeOwned = async (path: string, text: string, append = false) => {
    await (append ? appendFile(path, text) : writeFile(path, text));
    if (owner) await chown(path, owner.uid, owner.gid);
  };

  const newNode = async (): Promise<Node> => {
    const name = `node${nodes.length + 1}`;
    const node = {
      name,
      dir: join(root, name),
      port: await freePort(),
      log: join(root, `${name}.log`),
      live: false,
    };
    nodes.push(node);
    return node;
  };

  const directUrl = (port: number, database = "postgres") =>
    `postgres://postgres@127.0.0.1:${port}/${encodeURIComponent(database)}`;

  /** One short-lived connection; errors from a cut socket go to the caller, never to an unhandled 'error' event. */
  const withClient = async <T>(port: number, fn: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({
      connectionString: directUrl(port),
      connectionTimeoutMillis: 5_000,
      query_timeout: WAIT_TIMEOUT_MS,
    });
    client.on("error", () => {});
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end().catch(() => {});
    }
  };

  /** Poll `check` until it returns true; on timeout, throw with what we waited for and the log tails. */
  const waitFor = async (what: string, check: () => Promise<boolean>, timeoutMs = WAIT_TIMEOUT_MS) => {
    const deadline = Date.now() + timeoutMs;
    let last: unknown = null;
    for (;;) {
      try {
        if (await check()) return;
        last = null;
      } catch (error) {
        last = error;
      }
      if (Date.now() > deadline) {
        const cause = last instanceof Error ? ` (last error: ${last.message})` : "";
        throw new Error(
          `failover cluster: timed out after ${timeoutMs} ms waiting for ${what}${cause}\n${logs()}`,
        );
      }
      await sleep(25);
    }
  };

  const startNode = async (node: Node) => {
    node.live = true;
    await tool("pg_ctl", ["start", "-D", node.dir, "-l", node.log, "-w", "-t", "30", "-s"]);
  };

  /** Stop a server hard and make sure no process of it is left, whatever pg_ctl managed to do. */
  const killNode = async (node: Node) => {
    if (!node.live) return;
    // A stale postmaster.pid may name a pid the OS has since given to someone else's process: only touch ours.
    const found = postmasterPid(node.dir);
    const pid = found && isServerProcess(found, node.dir) ? found : null;
    const children = pid ? childPids(pid).filter((child) => isServerProcess(child)) : [];
    await tool("pg_ctl", ["stop", "-D", node.dir, "-m", "immediate", "-w", "-t", "10", "-s"], 15_000).catch(
      () => {},
    );
    for (const p of [...(pid ? [pid] : []), ...children]) {
      if (alive(p)) {
        try {
          process.kill(p, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
    }
    if (pid) {
      const deadline = Date.now() + 10_000;
      while (alive(pid) && Date.now() < deadline) await sleep(20);
      if (alive(pid)) throw new Error(`failover cluster: postmaster ${pid} of ${node.name} survived SIGKILL`);
    }
    node.live = false;
  };

  /** Whether `standby1` streams to `primaryNode` as its synchronous standby. */
  const waitForSync = (primaryNode: Node) =>
    waitFor(`${STANDBY_NAME} to stream synchronously to ${primaryNode.name}`, () =>
      withClient(primaryNode.port, async (client) => {
        const { rows } = await client.query<{ state: string; sync_state: string }>(
          "SELECT state, sync_state FROM pg_stat_replication WHERE application_name = $1",
          [STANDBY_NAME],
        );
        return rows.some((row) => row.state === "streaming" && row.sync_state === "sync");
      }),
    );

  /**
   * A standby copied from `from` with pg_basebackup, named standby1 so the primary's synchronous_standby_names
   * matches it; its own synchronous_standby_names is empty so that, once promoted, its commits never wait for a
   * standby it does not have.
   */
  const createStandby = async (from: Node): Promise<Node> => {
    const node = await newNode();
    await tool("pg_basebackup", [
      ...["-h", "127.0.0.1", "-p", String(from.port), "-U", "postgres", "-D", node.dir],
      ...["-R", "-X", "stream", "-c", "fast", "--no-sync"],
    ]);
    await writeOwned(
      join(node.dir, "postgresql.conf"),
      `\n# failover-cluster: ${node.name}, a standby of ${from.name}\nport = ${node.port}\nsynchronous_standby_names = ''\n`,
      true,
    );
    // pg_basebackup -R wrote a primary_conninfo without our application_name; the later line wins.
    await writeOwned(
      join(node.dir, "postgresql.auto.conf"),
      `primary_conninfo = 'host=127.0.0.1 port=${from.port} user=postgres application_name=${STANDBY_NAME}'\n`,
      true,
    );
    await startNode(node);
    return node;
  };

  const createPrimary = async (): Promise<Node> => {
    const node = await newNode();
    await tool("initdb", [
      ...["-D", node.dir, "-A", "trust", "-U", "postgres"],
      ...["--no-sync", "--encoding=UTF8", "--locale=C"],
    ]);
    const conf = [
      "",
      "# failover-cluster: primary",
      "listen_addresses = '127.0.0.1'",
      `port = ${node.port}`,
      `unix_socket_directories = '${root}'`,
      "wal_level = replica",
      "max_wal_senders = 5",
      "hot_standby = on",
      `synchronous_standby_names = '${STANDBY_NAME}'`,
      "synchronous_commit = on",
      `max_connections = ${maxConnections}`,
      "shared_buffers = 16MB",
      "logging_collector = off",
      "",
    ].join("\n");
    await writeOwned(join(node.dir, "postgresql.conf"), conf, true);
    const hba = [
      "local all all trust",
      "local replication all trust",
      "host all all 127.0.0.1/32 trust",
      "host replication all 127.0.0.1/32 trust",
      "",
    ].join("\n");
    await writeOwned(join(node.dir, "pg_hba.conf"), hba);
    await startNode(node);
    return node;
  };

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await proxy?.close();
    const failures: string[] = [];
    for (const node of nodes) {
      // A node we think dead may still have a pid file (e.g. a start that failed half way): look again.
      if (postmasterPid(node.dir)) node.live = true;
      await killNode(node).catch((error: Error) => failures.push(error.message));
    }
    await rm(root, { recursive: true, force: true });
    if (failures.length) throw new Error(failures.join("\n"));
  };

  try {
    primary = await createPrimary();
    standby = await createStandby(primary);
    await waitForSync(primary);
    proxy = await startTcpProxy({ host: "127.0.0.1", port: primary.port });
    proxy.forward();
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
  const stableProxy = proxy;

  const currentPrimary = (): Node => {
    if (!primary?.live)
      throw new Error("failover cluster: no running primary (killed and not yet promoted?)");
    return primary;
  };

  return {
    proxyPort: stableProxy.port,
    url: (database) => directUrl(stableProxy.port, database),
    primaryUrl: (database) => directUrl(currentPrimary().port, database),
    logs,
    stop,

    async killPrimary() {
      const node = currentPrimary();
      stableProxy.refuse();
      await killNode(node);
    },

    async promote() {
      if (!standby?.live) throw new Error("failover cluster: no standby to promote");
      if (primary?.live) throw new Error("failover cluster: the primary still runs; killPrimary() first");
      const node = standby;
      const started = performance.now();
      await tool("pg_ctl", ["promote", "-D", node.dir, "-w", "-t", "30", "-s"]);
      await waitFor(`${node.name} to leave recovery`, () =>
        withClient(node.port, async (client) => {
          const { rows } = await client.query<{ r: boolean }>("SELECT pg_is_in_recovery() AS r");
          return rows[0]?.r === false;
        }),
      );
      const ms = Math.round(performance.now() - started);
      // No standby yet: commits must not wait for one (the standby's config already had it empty; say so for good).
      await withClient(node.port, async (client) => {
        await client.query("ALTER SYSTEM SET synchronous_standby_names = ''");
        await client.query("SELECT pg_reload_conf()");
      });
      primary = node;
      standby = null;
      stableProxy.retarget({ host: "127.0.0.1", port: node.port });
      return ms;
    },

    async rebuildStandby() {
      const from = currentPrimary();
      if (standby?.live) throw new Error("failover cluster: a standby already runs");
      standby = await createStandby(from);
      await waitFor(`${standby.name} to stream from ${from.name}`, () =>
        withClient(from.port, async (client) => {
          const { rows } = await client.query(
            "SELECT 1 FROM pg_stat_replication WHERE application_name = $1",
            [STANDBY_NAME],
          );
          return rows.length > 0;
        }),
      );
      await withClient(from.port, async (client) => {
        await client.query(`ALTER SYSTEM SET synchronous_standby_names = '${STANDBY_NAME}'`);
        await client.query("SELECT pg_reload_conf()");
      });
      await waitForSync(from);
    },

    async createDatabase(name) {
      const node = currentPrimary();
      await withClient(node.port, (client) => client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`));
    },
  };
}
