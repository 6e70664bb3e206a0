import "server-only";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { AppDb } from "@/lib/db/client";
import { env } from "@/lib/platform/env";
import { tightenTree, writePrivateFile } from "@/lib/platform/private-files";
import type { Principal, Role } from "../contract/roles";
import { countAdmins, createUser, findUserByEmail } from "./users";

const SYSTEM: Principal = { kind: "system", id: "system:bootstrap", label: "server start-up", role: "admin" };

/** With ADMIN_EMAIL and ADMIN_PASSWORD set and no admin yet, create that admin (once; later starts do nothing). */
export async function ensureFirstAdmin({ db }: { db: AppDb }): Promise<void> {
  if (!env.ADMIN_EMAIL || !env.ADMIN_PASSWORD) return;
  if ((await countAdmins({ db })) > 0) return;
  if (await findUserByEmail({ db, email: env.ADMIN_EMAIL })) {
    console.warn(`[auth] ${env.ADMIN_EMAIL} exists but is not an admin; not promoting it automatically`);
    return;
  }
  try {
    await createUser({
      db,
      email: env.ADMIN_EMAIL,
      name: env.ADMIN_NAME,
      password: env.ADMIN_PASSWORD,
      role: "admin",
      by: SYSTEM,
    });
    console.log(`[auth] first admin ${env.ADMIN_EMAIL} created`);
  } catch (error) {
    // Instances starting together race to create the same admin: the one that lost finds it made.
    if (await findUserByEmail({ db, email: env.ADMIN_EMAIL })) return;
    throw error;
  }
}

export const DEMO_USERS: { email: string; name: string; role: Role }[] = [
  { email: "viewer@demo.local", name: "Vera Viewer", role: "viewer" },
  { email: "operator@demo.local", name: "Oscar Operator", role: "operator" },
  { email: "supervisor@demo.local", name: "Sofia Supervisor", role: "supervisor" },
  { email: "admin@demo.local", name: "Ada Admin", role: "admin" },
];

export function demoUsersEnabled(): boolean {
  return env.DEMO_USERS ?? !env.DATABASE_URL;
}

/** Where the demo operators' password is kept (never in the code, never in the log). */
export function demoCredentialsFile(): string {
  const base = env.PGLITE_DATA_DIR.startsWith("memory://") ? ".data/pglite" : env.PGLITE_DATA_DIR;
  return join(dirname(base), "demo-credentials");
}

function demoPassword(): string {
  const file = demoCredentialsFile();
  if (existsSync(file)) {
    tightenTree(file);
    const line = readFileSync(file, "utf8")
      .split("\n")
      .find((l) => l.startsWith("password: "));
    if (line) return line.slice("password: ".length).trim();
  }
  const password = randomBytes(12).toString("base64url");
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writePrivateFile(
    file,
    [
      "Demo operators of the refund console (they exist only in the demo seed).",
      ...DEMO_USERS.map((u) => `${u.role}: ${u.email}`),
      `password: ${password}`,
      "",
    ].join("\n"),
  );
  return password;
}

/** The demo seed's operators, one per role, sharing one random password kept in `demoCredentialsFile()`. */
export async function seedDemoUsers({ db }: { db: AppDb }): Promise<void> {
  if (!demoUsersEnabled()) return;
  const missing = [];
  for (const user of DEMO_USERS) if (!(await findUserByEmail({ db, email: user.email }))) missing.push(user);
  if (missing.length === 0) return;
  const password = demoPassword();
  for (const user of missing) {
    await createUser({
      db,
      ...user,
      password,
      by: { ...SYSTEM, id: "system:demo-seed", label: "demo seed" },
    }).catch(async (error) => {
      if (!(await findUserByEmail({ db, email: user.email }))) throw error;
    });
  }
  console.log(`[demo] demo operators ready; their password is in ${demoCredentialsFile()}`);
}
