import "server-only";
import { randomBytes } from "node:crypto";
import http from "node:http";
import { peekSingleton, singleton } from "@/lib/platform/singleton";

/*
 * `next start` hands route handlers a Request without the socket. It fills in X-Forwarded-For from the socket only
 * when the client sent none (`??=` in next/dist/server/base-server.js), so a client-sent header is indistinguishable
 * from the real address. We stamp every incoming request with its socket's peer address instead, under a header
 * whose value carries a per-process random token: a client can send the header, but cannot know the token, and the
 * stamp overwrites whatever it sent.
 */

export const PEER_HEADER = "x-hitl-peer";
/** The process's token (a process-wide singleton: the routes read what instrumentation.ts installed). */
const STAMP = "peer-stamp";

/**
 * Stamp every request of this process's HTTP servers with its peer address (once per process; instrumentation
 * calls it before the first request is handled). Requests accepted before it have no stamp and no known peer.
 */
export function installPeerStamp(): void {
  singleton(STAMP, () => {
    const token = randomBytes(18).toString("base64url");
    stampRequests(token);
    return token;
  });
}

function stampRequests(token: string): void {
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function stampedEmit(
    this: http.Server,
    event: string | symbol,
    ...args: unknown[]
  ) {
    if (event === "request") {
      const request = args[0] as http.IncomingMessage;
      request.headers[PEER_HEADER] = `${token} ${request.socket?.remoteAddress ?? ""}`;
    }
    return Reflect.apply(emit, this, [event, ...args]) as boolean;
  } as typeof emit;
}

/** The socket peer address stamped on these headers, or null (no stamp, or a client's forgery). */
export function peerAddress(headers: Headers): string | null {
  const token = peekSingleton<string>(STAMP);
  const value = headers.get(PEER_HEADER);
  if (!token || !value) return null;
  const space = value.indexOf(" ");
  if (space === -1 || value.slice(0, space) !== token) return null;
  return value.slice(space + 1) || null;
}
