import "server-only";
// Registers the app's agents with the runtime before any handler reaches it.
import "@/lib/agents";
import type { z } from "zod";
import { requireIntakeOrRole, requireRole } from "@/lib/auth/principal";
import type { Principal, Role } from "@/lib/auth/roles";
import { type Database, getDatabase } from "@/lib/db/client";
import { errorResponse } from "@/lib/error-response";
import { AppError, type ErrorCode } from "@/lib/errors";
import { assertSameOrigin, parseWith, readJson } from "@/lib/http";
import { jsonResponse } from "@/lib/json-response";
import { isDraining } from "@/lib/runtime/status";

/**
 * The one wrapper every API route handler goes through, so a handler is only parse → authorize → delegate →
 * respond. In order: the cross-site check for anything but GET/HEAD, the principal (401/403 before a byte of the
 * body is read), path parameters (ids: bounded, no control characters), the query and the JSON body against their
 * schemas (413/415/400 from `readJson`, then the schema's code naming the fields), the database handle, and one
 * error response for whatever the handler throws.
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
      const principal = await authorize(request, spec.access);
      const params = checkParams((await context?.params) ?? ({} as P));
      const query = spec.query
        ? parseWith(spec.query.schema, queryParams(request), spec.query.code, spec.query.what)
        : (undefined as Q);
      const body = spec.body
        ? parseWith(spec.body.schema, await readJson(request), spec.body.code, spec.body.what)
        : (undefined as B);
      const database = await getDatabase();
      return await handler({ request, principal: principal as Principal, params, body, query, database });
    } catch (error) {
      return errorResponse(error, spec.name);
    }
  };
}

async function authorize(request: Request, access: Access): Promise<Principal | null> {
  if (access === "public") return null;
  if (typeof access === "object") return requireIntakeOrRole(request, access.intakeOr);
  return requireRole(request, access);
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
