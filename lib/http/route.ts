import "server-only";
// Registers the app's agents with the runtime before any handler reaches it.
import "@/lib/agents/index";
import type { z } from "zod";
import { admit, authenticate } from "@/lib/auth/principal";
import { assertInterruptInScope, assertThreadInScope, type TeamScope, teamScope } from "@/lib/auth/teams";
import { AppError, type ErrorCode } from "@/lib/contract/errors";
import { jsonResponse } from "@/lib/contract/json-response";
import type { Principal, Role } from "@/lib/contract/roles";
import { type Database, getDatabase } from "@/lib/db/client";
import { errorResponse } from "@/lib/platform/http/error-response";
import { assertSameOrigin, parseWith, readJson } from "@/lib/platform/http/http";
import { isDraining } from "@/lib/platform/status";

/**
 * The one wrapper every API route handler goes through, so a handler is only parse → authorize → delegate →
 * respond. In order: the cross-site check for anything but GET/HEAD, who is asking (401), path parameters (ids:
 * bounded, no control characters), the teams' scope of the ids in the path (404 for another team's thread, before
 * the role is looked at), the role (403) — all before a byte of the body is read — then the query and the JSON body
 * against their schemas (413/415/400 from `readJson`, then the schema's code naming the fields), the scope of the ids
 * they name, and one error response for whatever the handler throws.
 */

/** Who may call: anyone, a signed-in user with at least this role, or also an intake key. */
export type Access = "public" | Role | { intakeOr: Role };

interface Parsed<T> {
  schema: z.ZodType<T>;
  /** Error code when it does not parse, e.g. `bad_request:inbox`. */
  code: ErrorCode;
  /** What it is, for the error message ("The inbox query"). */
  what: string;
}

export interface RouteSpec<B, Q> {
  /** Method and path, for the server log. */
  name: string;
  access: Access;
  body?: Parsed<B>;
  query?: Parsed<Q>;
  /** The handler may start a run here: refused with 503 while this instance drains (another one takes it). */
  startsRun?: boolean;
}

export interface RouteContext<P, B, Q> {
  request: Request;
  /** Null only on public routes. */
  principal: Principal;
  params: P;
  body: B;
  query: Q;
  database: Database;
  /** What of the threads the principal may see (teams), read once per request when asked for. */
  scope(): Promise<TeamScope>;
}

type Params = Record<string, string | string[]>;

/** Longest path parameter (ids are UUIDs, checkpoint ids, better-auth ids: all far shorter). */
const MAX_ID_LENGTH = 200;
/** Longest query parameter value. */
const MAX_QUERY_VALUE = 1000;
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

export function route<P extends Params = Params, B = undefined, Q = undefined>(
  spec: RouteSpec<B, Q>,
  handler: (context: RouteContext<P, B, Q>) => Promise<Response>,
) {
  return async (request: Request, context?: { params: Promise<P> }): Promise<Response> => {
    try {
      if (spec.startsRun && isDraining()) {
        throw new AppError(
          "unavailable:draining",
          "This server is shutting down and takes no new runs; send the request again (another instance takes it).",
        );
      }
      if (request.method !== "GET" && request.method !== "HEAD") assertSameOrigin(request);
      // The request's one database handle, handed to everything below (issue 51).
      const database = await getDatabase();
      const who = spec.access === "public" ? null : await authenticate({ db: database.db, request });
      if (spec.access !== "public" && !who) throw new AppError("unauthorized:session", "Sign in first.");
      const params = checkParams((await context?.params) ?? ({} as P));
      let read: Promise<TeamScope> | undefined;
      const scope = () => {
        read ??= teamScope(database.db, who);
        return read;
      };
      // Teams: the path's ids before the role is looked at (another team's thread is unknown, never forbidden),
      // then the role, then the ids the query and the body name.
      await refuseOutOfScope(database, scope, who, params);
      const principal = spec.access === "public" ? null : admit(who, spec.access);
      const query = spec.query
        ? parseWith(spec.query.schema, queryParams(request), spec.query.code, spec.query.what)
        : (undefined as Q);
      const body = spec.body
        ? parseWith(spec.body.schema, await readJson(request), spec.body.code, spec.body.what)
        : (undefined as B);
      await refuseOutOfScope(database, scope, principal, query, body);
      return await handler({
        request,
        principal: principal as Principal,
        params,
        body,
        query,
        database,
        scope,
      });
    } catch (error) {
      return errorResponse(error, spec.name);
    }
  };
}

/**
 * Teams: for a user who may not see every thread, a thread or a decision the request names — by path (`threadId`,
 * `interruptId`), by query or by body (the same names) — must exist and be in their teams' scope; otherwise it is
 * refused here as not existing (404), before the handler reads anything of it, whichever of the two it was. Every
 * route gets this by naming its ids the usual way; a user who sees everything is not slowed by it.
 */
async function refuseOutOfScope(
  database: Database,
  scope: () => Promise<TeamScope>,
  principal: Principal | null,
  ...sources: unknown[]
): Promise<void> {
  if (principal?.kind !== "user") return;
  const named = (key: string) =>
    sources.flatMap((source) => {
      const value =
        source && typeof source === "object" ? (source as Record<string, unknown>)[key] : undefined;
      return typeof value === "string" ? [value] : [];
    });
  const threadIds = named("threadId");
  const interruptIds = named("interruptId");
  if (threadIds.length === 0 && interruptIds.length === 0) return;
  const inScope = await scope();
  if (inScope.hiddenAgents.length === 0) return;
  for (const threadId of threadIds) await assertThreadInScope(database.db, principal, threadId, inScope);
  for (const interruptId of interruptIds) {
    await assertInterruptInScope(database.db, principal, interruptId, inScope);
  }
}

function checkParams<P extends Params>(params: P): P {
  for (const [name, value] of Object.entries(params)) {
    // A catch-all segment (`[...all]`) is an array of path parts: each is checked like an id.
    const parts: unknown[] = Array.isArray(value) ? value : [value];
    if (parts.length === 0 || !parts.every(isPathPart)) {
      throw new AppError("bad_request:id", `${name} is not a valid id.`, { fields: [name] });
    }
  }
  return params;
}

function isPathPart(value: unknown): boolean {
  return (
    typeof value === "string" && value.length > 0 && value.length <= MAX_ID_LENGTH && !CONTROL.test(value)
  );
}

/** The query string as one value per name; control characters and over-long values are refused here. */
function queryParams(request: Request): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [name, value] of new URL(request.url).searchParams) {
    if (CONTROL.test(name) || CONTROL.test(value) || value.length > MAX_QUERY_VALUE) {
      throw new AppError("bad_request:query", `The query parameter ${name.slice(0, 40)} is not valid.`, {
        fields: [name.slice(0, 40)],
      });
    }
    if (Object.hasOwn(out, name)) {
      throw new AppError("bad_request:query", `The query parameter ${name} is given twice.`, {
        fields: [name],
      });
    }
    out[name] = value;
  }
  return out;
}

/** JSON response that no cache keeps (every API answer reflects live state). */
export function json(body: unknown, init: { status?: number } = {}): Response {
  return jsonResponse(body, { status: init.status ?? 200, headers: { "cache-control": "no-store" } });
}
