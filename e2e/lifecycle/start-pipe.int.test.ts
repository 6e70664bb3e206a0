import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/*
 * `npm start` piped (`npm start | cat`, `| tee`, `| pino-pretty`) stops when asked (issue 55): npm, its shell and the
 * pipe's reader share one process group. Ctrl-C reaches all of them and ends the reader first, so the server's output
 * has no reader; `kill <npm's pid>` ends npm and its shell without passing the signal on. Either way the server stops
 * within its drain's bound, the embedded database's lock is released, and the next `npm start` starts.
 */

const root = process.cwd();

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** The process ids of a process group (from /proc: no `ps` needed). */
function groupMembers(pgid: number): { pid: number; cmd: string }[] {
  const out: { pid: number; cmd: string }[] = [];
  for (const entry of existsSync("/proc") ? readdirSync("/proc") : []) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid pgrp …: the comm may hold spaces, so read after its closing parenthesis.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid)
        out.push({
          pid: Number(entry),
          cmd: readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " "),
        });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

describe("npm start through a pipe", () => {
  const dir = mkdtempSync(join(tmpdir(), "hitl-start-pipe-"));
  let output = "";
  let shell: ChildProcess | undefined;

  afterAll(() => {
    if (shell?.pid) {
      try {
        process.kill(-shell.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  /** `npm start | cat` in a process group of its own (as a terminal's job), until it says it is ready. */
  async function start(): Promise<{ pgid: number; port: number }> {
    const port = await freePort();
    output = "";
    shell = spawn("bash", ["-c", "npm start 2>&1 | cat"], {
      cwd: root,
      detached: true,
      stdio: ["ignore", "pipe", "inherit"],
      env: {
        ...process.env,
        DATABASE_URL: "",
        PGLITE_DATA_DIR: join(dir, "pglite"),
        MAIL_DIR: join(dir, "mail"),
        PORT: String(port),
        SHUTDOWN_GRACE_MS: "2000",
      },
    });
    shell.stdout?.on("data", (chunk) => {
      output += String(chunk);
    });
    const deadline = Date.now() + 180_000;
    while (!output.includes("[start] ready in")) {
      if (Date.now() > deadline) throw new Error(`npm start did not get ready:\n${output.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    return { pgid: shell.pid as number, port };
  }

  async function allGone(pgid: number, ms: number): Promise<number> {
    const started = Date.now();
    while (groupMembers(pgid).length > 0) {
      if (Date.now() - started > ms)
        throw new Error(`still running after ${ms} ms: ${JSON.stringify(groupMembers(pgid))}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return Date.now() - started;
  }

  const lock = () => join(dir, "pglite.lock");

  it("Ctrl-C (SIGINT to the whole group, the reader first) stops it and releases the database", async () => {
    const { pgid } = await start();
    expect(existsSync(lock())).toBe(true);
    // It says each of its three steps, and nothing alarming on the way.
    for (const step of ["step 1 of 3", "step 2 of 3", "step 3 of 3"]) expect(output).toContain(step);
    expect(output).not.toMatch(/Ecmascript file had an error|⚠/i);
    const cat = groupMembers(pgid).find((p) => p.cmd.startsWith("cat"));
    // A terminal's Ctrl-C: the reader ends at once, then everyone hears it.
    if (cat) process.kill(cat.pid, "SIGINT");
    process.kill(-pgid, "SIGINT");
    const ms = await allGone(pgid, 20_000);
    console.log(`start-pipe: Ctrl-C stopped everything in ${ms} ms`);
    expect(existsSync(lock())).toBe(false);
  }, 240_000);

  it("SIGTERM to npm alone (its shell does not pass it on) stops the server too; the next start starts", async () => {
    const { pgid } = await start();
    const npm = groupMembers(pgid).find((p) => p.cmd.startsWith("npm start"));
    expect(npm, JSON.stringify(groupMembers(pgid))).toBeTruthy();
    process.kill(npm!.pid, "SIGTERM");
    const ms = await allGone(pgid, 25_000);
    console.log(`start-pipe: SIGTERM to npm stopped everything in ${ms} ms`);
    expect(existsSync(lock())).toBe(false);
    // The database is free: it starts again on it.
    const again = await start();
    process.kill(-again.pgid, "SIGTERM");
    await allGone(again.pgid, 20_000);
  }, 360_000);
});
