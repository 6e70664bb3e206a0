import "server-only";
import { betterAuth } from "better-auth";
import { drizzleAdapter } from "better-auth/adapters/drizzle";
import { eq } from "drizzle-orm";
import { type AppDb, getDatabase } from "@/lib/db/client";
import { recordAudit } from "@/lib/db/queries/audit";
import { authAccounts, authRateLimits, authSessions, authUsers, authVerifications } from "@/lib/db/schema";
import { env } from "@/lib/platform/env";
import { logger } from "@/lib/platform/observability/logger";
import { clearSingleton, singleton } from "@/lib/platform/singleton";
import { isRole } from "../contract/roles";
import { betterAuthLog } from "./auth-log";
import { CLIENT_IP_HEADER } from "./client-ip";
import { authSecret } from "./secret";

function createAuth(db: AppDb) {
  return betterAuth({
    appName: "Refund console",
    secret: authSecret(),
    database: drizzleAdapter(db, {
      provider: "pg",
      schema: {
        user: authUsers,
        session: authSessions,
        account: authAccounts,
        verification: authVerifications,
        rateLimit: authRateLimits,
      },
    }),
    telemetry: { enabled: false },
    logger: { level: "info", log: betterAuthLog(logger) },
    // Accounts are created by an admin (or the first-admin bootstrap), never by signing up.
    emailAndPassword: { enabled: true, disableSignUp: true, minPasswordLength: 12, maxPasswordLength: 128 },
    user: {
      additionalFields: {
        role: { type: "string", required: false, defaultValue: "viewer", input: false },
        disabled: { type: "boolean", required: false, defaultValue: false, input: false },
      },
    },
    // A working day; a session seen after an hour is extended.
    session: { expiresIn: 60 * 60 * 12, updateAge: 60 * 60 },
    // The console is served from wherever it is reached; browsers' requests must come from that same origin.
    trustedOrigins: (request) => {
      const host = request?.headers.get("x-forwarded-host") ?? request?.headers.get("host");
      if (!host) return [];
      const proto = request?.headers.get("x-forwarded-proto") ?? new URL(request?.url ?? "http://x").protocol;
      return [`${proto.replace(/:$/, "")}://${host}`];
    },
    rateLimit: {
      enabled: true,
      storage: "database",
      window: 60,
      max: 300,
      customRules: {
        "/sign-in/email": { window: 60, max: env.SIGN_IN_RATE_LIMIT },
      },
    },
    advanced: {
      // The address our route derived (socket peer, or through TRUSTED_PROXIES), never a header a client chose.
      ipAddress: { ipAddressHeaders: [CLIENT_IP_HEADER] },
      cookiePrefix: "hitl",
      // Secure cookies wherever the console is deployed (DATABASE_URL); the embedded demo is served over plain
      // http on a laptop, where some browsers drop Secure cookies even for localhost.
      useSecureCookies: Boolean(env.DATABASE_URL) && env.NODE_ENV === "production",
      defaultCookieAttributes: { httpOnly: true, sameSite: "lax" },
    },
    databaseHooks: {
      session: {
        create: {
          // A disabled user cannot start a session, even with the right password.
          before: async (session) => {
            const [user] = await db
              .select({ disabled: authUsers.disabled })
              .from(authUsers)
              .where(eq(authUsers.id, session.userId));
            return user && !user.disabled ? undefined : false;
          },
          after: async (session) => {
            const [user] = await db
              .select({ email: authUsers.email, role: authUsers.role })
              .from(authUsers)
              .where(eq(authUsers.id, session.userId));
            await recordAudit({
              db,
              entries: [
                {
                  action: "sign_in",
                  actor: {
                    id: session.userId,
                    label: user?.email ?? session.userId,
                    role: isRole(user?.role) ? user.role : null,
                  },
                  ipAddress: session.ipAddress ?? null,
                },
              ],
            });
          },
        },
      },
    },
  });
}

export type Auth = ReturnType<typeof createAuth>;

const AUTH = "auth";

/** The process's better-auth instance, on the process's database (a `singleton` like the database itself). */
export function getAuth(): Promise<Auth> {
  // Exception to issue 51 (listed in lib/database-handle.test.ts): a process-wide singleton on the process's database.
  return singleton(AUTH, () =>
    getDatabase()
      .then(({ db }) => createAuth(db))
      .catch((error) => {
        clearSingleton(AUTH);
        throw error;
      }),
  );
}
