import "server-only";
import { AppError } from "@/lib/contract/errors";
import type { AppDb } from "@/lib/db/client";
import { recentSignInFailures, recordAudit } from "@/lib/db/queries/audit";
import { forgiveRateLimitedRequest } from "@/lib/db/queries/rate-limits";
import { env } from "@/lib/platform/env";
import { errorResponse } from "@/lib/platform/http/error-response";
import { assertJsonContentType, parseJsonText, readBodyText } from "@/lib/platform/http/http";
import { parseIp } from "@/lib/platform/net/client-address";
import { singleton } from "@/lib/platform/singleton";
import { getAuth } from "./auth";
import { forBetterAuth, requestClientAddress } from "./client-ip";
import { createGate, type Gate } from "./gate";
import { withoutSessionTokens } from "./session-tokens";

/** A sign-in body is an email and a password of at most 128 characters: anything near this is not one. */
const SIGN_IN_BODY_LIMIT = 16 * 1024;

/** One answer for every refused credential: wrong password, unknown email, disabled account. */
const REFUSED = new AppError(
  "unauthorized:sign_in",
  "The email or password is not right, or the account is disabled.",
);

/** The process's bound on concurrent password checks (scrypt), shared by every route bundle. */
function hashGate(): Gate {
  return singleton("sign-in-gate", () =>
    createGate({ concurrency: env.SIGN_IN_CONCURRENCY, queue: env.SIGN_IN_QUEUE }),
  );
}

function refusal(error: AppError, retryAfterSeconds?: number): Response {
  const response = errorResponse(error);
  if (retryAfterSeconds !== undefined) {
    response.headers.set("retry-after", String(Math.max(1, Math.ceil(retryAfterSeconds))));
  }
  return response;
}

/** The email a body names (trimmed, lowercased, bounded), for accounting; null if the body names none. */
function emailOf(text: string): string | null {
  try {
    const body = JSON.parse(text) as { email?: unknown };
    return typeof body?.email === "string" ? body.email.trim().toLowerCase().slice(0, 320) : null;
  } catch {
    return null;
  }
}

/**
 * `POST /api/auth/sign-in/email`, around better-auth's handler: the body is read within limits (415, 413) before
 * better-auth parses it; password checks run at most SIGN_IN_CONCURRENCY at a time with a short queue (429
 * `rate_limited:sign_in_busy` beyond it, with Retry-After: overload is the client's to retry, never a 5xx); an account with too many recent failures is refused before any hash (429
 * `rate_limited:sign_in`); better-auth limits per client address (the derived one, never a client's header); every
 * refused credential gets the same 401 and an audit entry with the address; the session token never reaches the body.
 */
export async function signInWithEmail({ db, request }: { db: AppDb; request: Request }): Promise<Response> {
  assertJsonContentType(request);
  const text = await readBodyText(request, SIGN_IN_BODY_LIMIT);
  // The same checks as every JSON body (a NUL or a lone surrogate in an email cannot be looked up, audited or stored).
  parseJsonText(text);
  const email = emailOf(text);
  const address = requestClientAddress(request.headers);
  const outcome = await hashGate().run(async () => {
    if (email) {
      const failures = await recentSignInFailures({
        db,
        email,
        windowSeconds: env.SIGN_IN_ACCOUNT_WINDOW_SECONDS,
        limit: env.SIGN_IN_ACCOUNT_LIMIT,
      });
      const oldest = failures[env.SIGN_IN_ACCOUNT_LIMIT - 1];
      if (oldest) {
        const retryAfter = (oldest.getTime() + env.SIGN_IN_ACCOUNT_WINDOW_SECONDS * 1000 - Date.now()) / 1000;
        return refusal(tooManyAttempts(), retryAfter);
      }
    }
    const response = await (await getAuth()).handler(forBetterAuth(request, text));
    if (response.status === 429) {
      await response.body?.cancel();
      return refusal(tooManyAttempts(), Number(response.headers.get("x-retry-after")) || 60);
    }
    if (response.status === 401) {
      await response.body?.cancel();
      if (email) {
        await recordAudit({
          db,
          entries: [
            {
              action: "sign_in_failed",
              actor: { id: "anonymous", label: email, role: null },
              detail: { email },
              ipAddress: address,
            },
          ],
        });
      }
      return refusal(REFUSED);
    }
    // Only failures count against an address: give the attempt back (five good sign-ins must not lock the sixth out).
    if (response.ok) await forgiveRateLimitedRequest({ db, keys: rateLimitKeys(address) });
    return withoutSessionTokens(response);
  });
  if (outcome.busy) {
    return refusal(
      new AppError("rate_limited:sign_in_busy", "Too many sign-ins at once. Try again in a moment."),
      1,
    );
  }
  return outcome.value;
}

function tooManyAttempts(): AppError {
  return new AppError("rate_limited:sign_in", "Too many sign-in attempts. Wait a while, then try again.");
}

/**
 * The keys better-auth's limiter gives this address's sign-in bucket (`<address>|/sign-in/email`): the address as we
 * handed it over, and for IPv6 its fully expanded lowercase form (how better-auth normalises one).
 */
function rateLimitKeys(address: string | null | undefined): string[] {
  if (!address) return [];
  const keys = new Set([`${address.toLowerCase()}|/sign-in/email`]);
  const bytes = parseIp(address);
  if (bytes?.length === 16) {
    const groups = Array.from({ length: 8 }, (_, i) =>
      (((bytes[2 * i] ?? 0) << 8) | (bytes[2 * i + 1] ?? 0)).toString(16).padStart(4, "0"),
    );
    keys.add(`${groups.join(":")}|/sign-in/email`);
  }
  return [...keys];
}
