import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type APIRequestContext, request } from "@playwright/test";

/*
 * Who the browser suite signs in as. playwright.config.ts puts the first admin and the session secret into the
 * environment (the server, the setup project and every worker read the same values); the setup project
 * (e2e/auth/setup.ts) creates one user per role with the admin's password, signs each in and keeps their cookies as
 * Playwright storage state, plus an intake API key, in `authDir()`.
 */

export const ROLES = ["viewer", "operator", "supervisor", "admin"] as const;
export type E2eRole = (typeof ROLES)[number];

/** Where the run keeps its storage states and key: inside its own output directory (parallel runs stay apart). */
export function authDir(): string {
  return resolve(process.env.E2E_AUTH_DIR ?? join(process.env.PW_OUTPUT_DIR ?? "test-results/e2e", ".auth"));
}

export function emailOf(role: E2eRole): string {
  return role === "admin" ? (process.env.ADMIN_EMAIL ?? "admin@e2e.local") : `${role}@e2e.local`;
}

/** Every e2e user shares the first admin's (random, per run) password. */
export function passwordOf(_role: E2eRole): string {
  const password = process.env.ADMIN_PASSWORD;
  if (!password) throw new Error("ADMIN_PASSWORD is not set: run the suite through playwright.config.ts");
  return password;
}

/** The storage state (session cookie) of `role`, written by the setup project. */
export function storageStatePath(role: E2eRole): string {
  return join(authDir(), `${role}.json`);
}

function intakeKeyPath(): string {
  return join(authDir(), "intake-key.txt");
}

/** The intake API key the setup project issued on the suite's server. */
export function readIntakeKey(): string {
  const file = intakeKeyPath();
  if (!existsSync(file)) throw new Error(`no intake key at ${file}: the setup project has not run`);
  return readFileSync(file, "utf8").trim();
}

/**
 * Sign in as `role` over the API on the server at `base`; the session cookie lands in `api`'s cookie jar. The
 * Origin header is the server's own (better-auth refuses a cookie-carrying POST without one).
 */
export async function signInOver(api: APIRequestContext, base: string, role: E2eRole): Promise<void> {
  const origin = new URL(base).origin;
  const res = await api.post(`${origin}/api/auth/sign-in/email`, {
    headers: { origin },
    data: { email: emailOf(role), password: passwordOf(role) },
  });
  if (!res.ok())
    throw new Error(`sign-in of ${emailOf(role)} on ${origin}: ${res.status()} ${await res.text()}`);
}

/**
 * On a server with the suite's first admin (its database fresh or not): create the viewer, operator and supervisor
 * (an existing one is fine) and issue an intake key. Returns the key.
 */
export async function createUsersAndKey(base: string): Promise<string> {
  const origin = new URL(base).origin;
  const admin = await request.newContext({ baseURL: origin });
  try {
    await signInOver(admin, origin, "admin");
    for (const role of ["viewer", "operator", "supervisor"] as const) {
      const res = await admin.post("/api/admin/users", {
        data: { email: emailOf(role), name: `E2E ${role}`, password: passwordOf(role), role },
      });
      if (res.status() !== 201 && res.status() !== 409) {
        throw new Error(`creating ${emailOf(role)}: ${res.status()} ${await res.text()}`);
      }
    }
    const key = await admin.post("/api/admin/keys", { data: { name: "e2e intake" } });
    if (key.status() !== 201) throw new Error(`issuing an intake key: ${key.status()} ${await key.text()}`);
    return ((await key.json()) as { key: string }).key;
  } finally {
    await admin.dispose();
  }
}

/** The setup project's work: users, key, and one storage state per role, all in `authDir()`. */
export async function writeAuthState(base: string): Promise<void> {
  mkdirSync(authDir(), { recursive: true });
  const key = await createUsersAndKey(base);
  writeFileSync(intakeKeyPath(), `${key}\n`, { mode: 0o600 });
  for (const role of ROLES) {
    const api = await request.newContext({ baseURL: new URL(base).origin });
    try {
      await signInOver(api, base, role);
      const check = await api.get("/api/threads");
      if (check.status() !== 200)
        throw new Error(`${emailOf(role)}'s session is not accepted: ${check.status()}`);
      await api.storageState({ path: storageStatePath(role) });
    } finally {
      await api.dispose();
    }
  }
}
