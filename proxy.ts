import { type NextRequest, NextResponse } from "next/server";
import { AppError, appErrorResponse } from "@/lib/contract/errors";
import { newNonce, PAGE_PATH_HEADER, pageContentSecurityPolicy } from "@/lib/platform/http/csp";
import { MAX_BODY_BYTES } from "@/lib/platform/http/http";

/**
 * Two jobs, kept apart by the matcher:
 *
 * - **Pages** get a Content-Security-Policy with a nonce of their own. The policy goes on the request too: Next reads
 *   the nonce from it and puts it on the scripts it renders (pages are rendered per request: the root layout reads
 *   the session). API routes and static files are not pages (next.config.ts sets their headers).
 * - **Page paths whose percent-encoding does not decode** get a plain 400 page, for the same reason as below.
 * - **API paths whose percent-encoding does not decode** (a lone `%`, `%zz`, `%FF`, an overlong `%C0%AF`, an encoded
 *   surrogate `%ED%A0%80`) get 400 `bad_request:path`: Next.js decodes dynamic segments before any route handler runs
 *   and answers a URIError there with a bare 500, so the route wrapper never gets to refuse such an id itself. Only
 *   paths with a `%` that is not an ASCII escape come here: Next.js buffers the whole body of a request that passes
 *   through the proxy and waits for its end, which would undo `readBodyText`'s refusal while streaming. For such paths
 *   a declared body over the limit is refused with 413 here rather than handed on.
 */
export function proxy(request: NextRequest): Response {
  const path = request.nextUrl.pathname;
  if (path.startsWith("/api/")) return refuseUndecodable(request, path);
  if (!decodes(path)) return badPagePath();
  // Build-time constant (inlined by the bundler), as in next.config.ts.
  const policy = pageContentSecurityPolicy({ nonce: newNonce(), dev: process.env.NODE_ENV !== "production" });
  const headers = new Headers(request.headers);
  headers.set("content-security-policy", policy);
  headers.set(PAGE_PATH_HEADER, `${path}${request.nextUrl.search}`);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("content-security-policy", policy);
  return response;
}

function decodes(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/** A page address that does not decode: a plain 400 page (Next.js would answer a bare 500 decoding its segments). */
function badPagePath(): Response {
  return new Response(
    '<!doctype html><html lang="en"><meta charset="utf-8"><title>Bad request</title>' +
      "<h1>This address is not valid</h1><p>Part of it is not valid percent-encoded UTF-8, so it names no page. " +
      'Check the link, or go to <a href="/">the inbox</a>.</p></html>',
    {
      status: 400,
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "content-security-policy":
          "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      },
    },
  );
}

function refuseUndecodable(request: NextRequest, path: string): Response {
  if (!decodes(path)) {
    return appErrorResponse(
      new AppError("bad_request:path", "The request path is not valid percent-encoded UTF-8.", {
        path: path.slice(0, 200),
      }),
    );
  }
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
    return appErrorResponse(
      new AppError("payload_too_large:body", `The request body is larger than ${MAX_BODY_BYTES / 1024} KB.`, {
        limitBytes: MAX_BODY_BYTES,
      }),
    );
  }
  return NextResponse.next();
}

export const config = {
  matcher: ["/((?!api/|_next/static/|_next/image|favicon.ico).*)", "/api/:path(.*%(?![0-7][0-9a-fA-F]).*)"],
};
