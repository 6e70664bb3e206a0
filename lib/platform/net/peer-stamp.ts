import "server-only";
import { randomBytes } from "node:crypto";
import http from "node:http";

/*
 * `next start` hands route handlers a Request without the socket. It fills in X-Forwarded-For from the socket only
 * when the client sent none (`??=` in next/dist/server/base-server.js), so a client-sent header is indistinguishable
 * from the real address. We stamp every incoming request with its socket's peer address instead, under a header
 * whose value carries a per-process random token: a client can send the header, but cannot know the token, and the
 * stamp overwrites whatever it sent.
 */

export const PEER_HEADER = "x-hitl-peer";
const GLOBAL_KEY = Symbol.for("hitl-console.peer-stamp");
type GlobalWithStamp = typeof globalThis & { [GLOBAL_KEY]?: string };

/**
 * Stamp every request of this process's HTTP servers with its peer address (once per process; instrumentation
 * calls it before the first request is handled). Requests accepted before it have no stamp and no known peer.
 */
export function installPeerStamp(): void {
  const g = globalThis as GlobalWithStamp;
  if (g[GLOBAL_KEY]) return;
  const token = randomBytes(18).toString("base64url");
  g[GLOBAL_KEY] = token;
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
  const token = (globalThis as GlobalWithStamp)[GLOBAL_KEY];
  const value = headers.get(PEER_HEADER);
  if (!token || !value) return null;
  const space = value.indexOf(" ");
  if (space === -1 || value.slice(0, space) !== token) return null;
  return value.slice(space + 1) || null;
}
