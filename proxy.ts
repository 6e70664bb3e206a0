import { type NextRequest, NextResponse } from "next/server";
import { newNonce, pageContentSecurityPolicy } from "@/lib/csp";

/**
 * Every page gets a Content-Security-Policy with a nonce of its own. The policy goes on the request too: Next reads
 * the nonce from it and puts it on the scripts it renders (pages are rendered per request: the root layout reads
 * the session). API routes and static files are not pages (next.config.ts sets their headers).
 */
export function proxy(request: NextRequest) {
  // Build-time constant (inlined by the bundler), as in next.config.ts.
  const policy = pageContentSecurityPolicy({ nonce: newNonce(), dev: process.env.NODE_ENV !== "production" });
  const headers = new Headers(request.headers);
  headers.set("content-security-policy", policy);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("content-security-policy", policy);
  return response;
}

export const config = {
  matcher: ["/((?!api/|_next/static/|_next/image|favicon.ico).*)"],
};
