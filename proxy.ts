import { NextResponse } from "next/server";
import { AppError, errorResponse } from "@/lib/errors";
import { MAX_BODY_BYTES } from "@/lib/http";

/**
 * Refuse an API path whose percent-encoding does not decode — a lone `%`, `%zz`, or bytes that are not UTF-8 such as
 * `%FF`, an overlong `%C0%AF` or an encoded surrogate `%ED%A0%80` — with 400 `bad_request:path`. Next.js decodes
 * dynamic segments before any route handler runs and answers a URIError there with a bare 500, so the route wrapper
 * never gets to refuse such an id itself.
 *
 * The matcher keeps every other request away from here: Next.js buffers the whole body of a request that passes
 * through the proxy (up to 10 MB) and waits for its end before answering, even when the proxy refuses it, which
 * would undo `readBodyText`'s refusal while streaming. So only paths with a `%` that is not an ASCII escape
 * (`%00`–`%7F`) come here, and such a request that declares more body than it sends waits for it (the fuzz suite
 * counts these as stalled uploads). For paths that do decode, a declared body over the limit is refused with 413
 * here rather than handed on.
 */
export function proxy(request: Request): Response {
  const path = new URL(request.url).pathname;
  try {
    decodeURIComponent(path);
  } catch {
    return errorResponse(
      new AppError("bad_request:path", "The request path is not valid percent-encoded UTF-8.", {
        path: path.slice(0, 200),
      }),
    );
  }
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
    return errorResponse(
      new AppError("payload_too_large:body", `The request body is larger than ${MAX_BODY_BYTES / 1024} KB.`, {
        limitBytes: MAX_BODY_BYTES,
      }),
    );
  }
  return NextResponse.next();
}

export const config = { matcher: "/api/:path(.*%(?![0-7][0-9a-fA-F]).*)" };
