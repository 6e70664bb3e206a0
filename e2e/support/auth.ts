import { randomBytes } from "node:crypto";

/*
 * Signing in for the HTTP suites. Every test server gets the same secret and first admin (from its environment, as
 * in production); the first time a database is used, the admin creates one user per role and an intake key through
 * the admin API, and each signs in for real. Requests then carry the right cookie or key.
 */

export type Who = "viewer" | "operator" | "supervisor" | "admin" | "intake";

export const TEST_PASSWORD = `pw-${randomBytes(12).toString("hex")}`;
export const TEST_SECRET = randomBytes(32).toString("hex");
export const ADMIN_EMAIL = "admin@test.local";
export const emailOf = (role: Exclude<Who, "intake">) => `${role}@test.local`;

// The data keys (lib/platform/data-keys.ts) every test server and this process share (vitest.config.ts sets them for a
// vitest run; a harness run by tsx gets its own here).
process.env.DATA_MASTER_KEY ??= `test:${randomBytes(32).toString("base64")}`;
process.env.DATA_INDEX_KEY ??= randomBytes(32).toString("base64");

/** Environment every test server starts with (a test may override any of it). */
export function authEnv(): Record<string, string> {
  return {
    BETTER_AUTH_SECRET: TEST_SECRET,
    DATA_MASTER_KEY: process.env.DATA_MASTER_KEY ?? "",
    DATA_INDEX_KEY: process.env.DATA_INDEX_KEY ?? "",
    ADMIN_EMAIL,
    ADMIN_PASSWORD: TEST_PASSWORD,
    // Suites sign in many times from one address; the rate-limit tests set their own limits.
    SIGN_IN_RATE_LIMIT: "10000",
    SIGN_IN_ACCOUNT_LIMIT: "10000",
  };
}

interface Credentials {
  cookies: Record<Exclude<Who, "intake">, string>;
  intakeKey: string;
}

/** Per database (servers sharing one share the users); base URL → database. */
const byDatabase = new Map<string, Promise<Credentials>>();
const databaseOf = new Map<string, string>();

/** Sign in with email + password; returns the session cookie header value. */
export async function signIn(baseUrl: string, email: string, password = TEST_PASSWORD): Promise<string> {
  const res = await fetch(`${baseUrl}/api/auth/sign-in/email`, {
    method: "POST",
    // A browser's sign-in form sends its origin; better-auth refuses a sign-in without one.
    headers: { "content-type": "application/json", origin: new URL(baseUrl).origin },
    body: JSON.stringify({ email, password }),
  });
  if (!res.ok) throw new Error(`sign-in of ${email}: ${res.status} ${await res.text()}`);
  const cookies = res.headers.getSetCookie().map((c) => c.split(";", 1)[0]);
  const cookie = cookies.filter(Boolean).join("; ");
  if (!cookie) throw new Error(`sign-in of ${email} set no cookie`);
  return cookie;
}

async function bootstrap(baseUrl: string): Promise<Credentials> {
  const admin = await signIn(baseUrl, ADMIN_EMAIL);
  const post = (path: string, body: unknown) =>
    fetch(`${baseUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: admin },
      body: JSON.stringify(body),
    });
  for (const role of ["viewer", "operator", "supervisor"] as const) {
    const res = await post("/api/admin/users", {
      email: emailOf(role),
      name: `Test ${role}`,
      password: TEST_PASSWORD,
      role,
    });
    if (res.status !== 201 && res.status !== 409)
      throw new Error(`create ${role}: ${res.status} ${await res.text()}`);
  }
  const key = await post("/api/admin/keys", { name: "test intake" });
  if (key.status !== 201) throw new Error(`issue key: ${key.status} ${await key.text()}`);
  const cookies = {
    admin,
    viewer: await signIn(baseUrl, emailOf("viewer")),
    operator: await signIn(baseUrl, emailOf("operator")),
    supervisor: await signIn(baseUrl, emailOf("supervisor")),
  };
  return { cookies, intakeKey: ((await key.json()) as { key: string }).key };
}

/** Called by startTestServer once the server is healthy: make sure the database has the test users. */
export async function registerServer(baseUrl: string, databaseUrl: string): Promise<void> {
  databaseOf.set(baseUrl, databaseUrl);
  if (!byDatabase.has(databaseUrl)) {
    const pending = bootstrap(baseUrl);
    byDatabase.set(databaseUrl, pending);
    pending.catch(() => byDatabase.delete(databaseUrl));
  }
  await byDatabase.get(databaseUrl);
}

async function credentials(baseUrl: string): Promise<Credentials> {
  const origin = new URL(baseUrl).origin;
  const db = databaseOf.get(origin);
  const creds = db ? byDatabase.get(db) : undefined;
  if (!creds) throw new Error(`no test users for ${origin}: start it with startTestServer`);
  return creds;
}

/** Headers that authenticate as `who` on the server at `baseUrl` (any URL of it). */
export async function authHeaders(baseUrl: string, who: Who = "supervisor"): Promise<Record<string, string>> {
  const creds = await credentials(baseUrl);
  return who === "intake" ? { authorization: `Bearer ${creds.intakeKey}` } : { cookie: creds.cookies[who] };
}

/** fetch as `who` (default: a supervisor). Headers given by the caller win. */
export async function authedFetch(url: string, init: RequestInit = {}, who: Who = "supervisor") {
  const headers = new Headers(init.headers);
  if (!headers.has("cookie") && !headers.has("authorization")) {
    for (const [k, v] of Object.entries(await authHeaders(url, who))) headers.set(k, v);
  }
  return fetch(url, { ...init, headers });
}
