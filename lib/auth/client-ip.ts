import "server-only";
import { env } from "@/lib/platform/env";
import { clientAddress } from "@/lib/platform/net/client-address";
import { PEER_HEADER, peerAddress } from "@/lib/platform/net/peer-stamp";

/** The header better-auth reads the client address from (`advanced.ipAddress.ipAddressHeaders`); only we set it. */
export const CLIENT_IP_HEADER = "x-hitl-client-ip";

/** The request's client address: its socket peer, or through TRUSTED_PROXIES the first untrusted hop. */
export function requestClientAddress(headers: Headers): string | null {
  return clientAddress({
    peer: peerAddress(headers),
    forwardedFor: headers.get("x-forwarded-for"),
    trustedProxies: env.TRUSTED_PROXIES,
  });
}

/**
 * A copy of `request` for better-auth, carrying the derived client address in CLIENT_IP_HEADER (any copy the
 * client sent is dropped) and `body` in place of the original stream. Without a known address the header is absent
 * and better-auth's limiter puts such requests in one shared bucket, which only ever limits more.
 */
export function forBetterAuth(request: Request, body?: string): Request {
  const headers = new Headers(request.headers);
  headers.delete(CLIENT_IP_HEADER);
  headers.delete(PEER_HEADER);
  const address = requestClientAddress(request.headers);
  if (address) headers.set(CLIENT_IP_HEADER, address);
  if (body !== undefined) headers.delete("content-length");
  return new Request(request.url, {
    method: request.method,
    headers,
    body: body === undefined || body === "" ? undefined : body,
    signal: request.signal,
  });
}
