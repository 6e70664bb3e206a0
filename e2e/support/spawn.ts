import { spawn } from "node:child_process";
import { join } from "node:path";

/** Run a TypeScript file in a child process with the server condition; resolves with its stdout, rejects on failure. */
export function runTsx(file: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [join(process.cwd(), "node_modules/tsx/dist/cli.mjs"), "--conditions=react-server", file, ...args],
      { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("exit", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${file} exited ${code}: ${err}`)),
    );
  });
}
