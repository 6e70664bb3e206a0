/**
 * Users and intake keys from the command line (`npm run users -- …`), on the configured database (DATABASE_URL, or
 * the embedded one: stop the console first, its data directory is locked while it runs).
 *
 *   create-admin --email E [--name N]   the first admin; the password comes from ADMIN_PASSWORD or standard input
 *   create-user --email E --role R [--name N]   same, any role
 *   issue-key --name N                  an intake API key, printed once (only its hash is stored)
 *   revoke-key --id ID                  revoke an intake key
 *   erase-customer --email E [--name N]  erase a customer: their email, names and personal values become placeholders in their own rows (audited)
 *   verify-audit                        check the audit trail's hash chain
 *   list                                users and keys
 */
import { createInterface } from "node:readline";
import { Writable } from "node:stream";
import { issueApiKey, listApiKeys, revokeApiKey } from "@/lib/auth/api-keys";
import { createUser, listUsers } from "@/lib/auth/users";
import { appErrorOf } from "@/lib/contract/errors";
import { isRole, type Principal } from "@/lib/contract/roles";
import { getDatabase } from "@/lib/db/client";
import { verifyAuditTrail } from "@/lib/db/queries/audit";
import { eraseCustomer } from "@/lib/runtime/retention/erasure";
import { readOption, usageExit } from "./cli";

const USAGE = `usage: npm run users -- create-admin --email E [--name N]
       npm run users -- create-user --email E --role viewer|operator|supervisor|admin [--name N]
       npm run users -- issue-key --name N
       npm run users -- revoke-key --id ID
       npm run users -- erase-customer --email E [--name N]
       npm run users -- verify-audit
       npm run users -- list
The password is read from ADMIN_PASSWORD, or from standard input (typed without echo on a terminal).`;

function fail(message: string): never {
  return usageExit("users", USAGE, message);
}
const option = (args: string[], name: string) => readOption(args, name, fail);

async function readPassword(): Promise<string> {
  if (process.env.ADMIN_PASSWORD) return process.env.ADMIN_PASSWORD;
  const muted = new Writable({ write: (_chunk, _enc, done) => done() });
  const rl = createInterface({
    input: process.stdin,
    output: process.stdin.isTTY ? muted : undefined,
    terminal: process.stdin.isTTY,
  });
  if (process.stdin.isTTY) process.stdout.write("Password (12+ characters, not shown): ");
  const line = await new Promise<string>((resolve) =>
    rl.once("line", resolve).once("close", () => resolve("")),
  );
  rl.close();
  if (process.stdin.isTTY) process.stdout.write("\n");
  return line;
}

const CLI: Principal = {
  kind: "system",
  id: `system:users-cli:${process.env.USER ?? "unknown"}`,
  label: `users command (${process.env.USER ?? "unknown"})`,
  role: "admin",
};

const [command, ...args] = process.argv.slice(2);
const COMMANDS = [
  "create-admin",
  "create-user",
  "issue-key",
  "revoke-key",
  "erase-customer",
  "verify-audit",
  "list",
];
if (!command || !COMMANDS.includes(command))
  fail(command ? `unknown command ${command}` : "a command is required");
const database = await getDatabase();
try {
  switch (command) {
    case "create-admin":
    case "create-user": {
      const email = option(args, "--email") ?? fail("--email is required");
      const role = command === "create-admin" ? "admin" : option(args, "--role");
      if (!isRole(role)) fail("--role must be viewer, operator, supervisor or admin");
      const password = await readPassword();
      if (password.length < 12) fail("the password needs at least 12 characters");
      const user = await createUser({
        db: database.db,
        email,
        name: option(args, "--name") ?? email,
        password,
        role,
        by: CLI,
      });
      console.log(`created ${user.role} ${user.email} (${user.id})`);
      break;
    }
    case "issue-key": {
      const name = option(args, "--name") ?? fail("--name is required");
      const { key, apiKey } = await issueApiKey({ db: database.db, name, by: CLI });
      console.log(`intake key "${apiKey.name}" (${apiKey.id}) — shown this once, store it now:\n${key}`);
      break;
    }
    case "revoke-key": {
      const id = option(args, "--id") ?? fail("--id is required");
      const key = await revokeApiKey({ db: database.db, keyId: id, by: CLI });
      console.log(`revoked "${key.name}" (${key.id})`);
      break;
    }
    case "erase-customer": {
      const email = option(args, "--email") ?? fail("--email is required");
      const name = option(args, "--name");
      const report = await eraseCustomer({ db: database.db, email, names: name ? [name] : [], actor: CLI });
      console.log(
        `erased customer ${report.customerRef}: ${report.threads} threads, ` +
          `${Object.values(report.rows).reduce((a, b) => a + b, 0)} rows, ${report.auditRows} audit entries ` +
          `(erasure entry ${report.erasureId})`,
      );
      console.log(JSON.stringify(report));
      break;
    }
    case "verify-audit": {
      const result = await verifyAuditTrail({ db: database.db });
      console.log(
        result.ok
          ? `audit trail verifies: ${result.rows} entries`
          : `audit trail does NOT verify: ${result.problems.map((p) => `#${p.id} ${p.problem}`).join("; ")}`,
      );
      if (!result.ok) process.exitCode = 1;
      break;
    }
    case "list": {
      for (const u of await listUsers({ db: database.db }))
        console.log(`user ${u.email}\t${u.role}${u.disabled ? "\tdisabled" : ""}`);
      for (const k of await listApiKeys({ db: database.db })) {
        console.log(`key  ${k.id}\t${k.name}\t${k.prefix}…\t${k.revokedAt ? "revoked" : "active"}`);
      }
      break;
    }
    default:
      fail(command ? `unknown command ${command}` : "a command is required");
  }
} catch (error) {
  const known = appErrorOf(error);
  if (known) {
    console.error(`users: ${known.message} (${known.code})`);
    process.exitCode = 1;
  } else throw error;
} finally {
  await database.close();
}
