import "server-only";
import { lookup as dnsLookup } from "node:dns/promises";
import type { LookupFunction } from "node:net";
import { type Cidr, formatIp, inCidr, parseCidr, parseIp } from "./client-address";

/*
 * Webhook targets are URLs an admin types; without a check, a signed POST reaches whatever the server can reach:
 * 127.0.0.1, the cloud's metadata address, the database's private network. A target may resolve only to public
 * addresses unless WEBHOOK_ALLOW_PRIVATE lists it. The check runs on the resolved addresses (a name can point
 * anywhere), and delivery connects to the very address checked (no second resolution a DNS rebinding could change).
 */

/** Networks no webhook may reach by default: unspecified, loopback, private, carrier NAT, link-local, multicast, reserved. */
const BLOCKED: Cidr[] = [
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "224.0.0.0/4",
  "240.0.0.0/4",
  "::/128",
  "::1/128",
  "fc00::/7",
  "fe80::/10",
  "ff00::/8",
  "64:ff9b::/96",
].map((text) => parseCidr(text) as Cidr);

/** Whether `address` (text) is one a webhook may not reach, given the allowed networks. Unparseable: blocked. */
export function isBlockedAddress(address: string, allowed: Cidr[]): boolean {
  const bytes = parseIp(address);
  if (!bytes) return true;
  if (allowed.some((network) => inCidr(bytes, network))) return false;
  return BLOCKED.some((network) => inCidr(bytes, network));
}

export type TargetCheck = { ok: true; addresses: string[] } | { ok: false; reason: string };

/** Resolve a webhook URL's host and check every address it resolves to. */
export async function checkWebhookTarget(url: string, allowed: Cidr[]): Promise<TargetCheck> {
  let host: string;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      return { ok: false, reason: "A webhook target is an http(s) URL." };
    }
    host = parsed.hostname.replace(/^\[|\]$/g, "");
  } catch {
    return { ok: false, reason: "A webhook target is an http(s) URL." };
  }
  let addresses: string[];
  try {
    addresses = parseIp(host) ? [host] : (await dnsLookup(host, { all: true })).map((a) => a.address);
  } catch {
    return { ok: false, reason: `The webhook's host ${host} does not resolve.` };
  }
  const blocked = addresses.filter((a) => isBlockedAddress(a, allowed));
  if (addresses.length === 0 || blocked.length > 0) {
    return {
      ok: false,
      reason: `The webhook's host ${host} resolves to ${blocked.map((a) => formatIp(parseIp(a) ?? new Uint8Array())).join(", ") || "nothing"}: loopback, link-local, private and unspecified addresses are refused unless WEBHOOK_ALLOW_PRIVATE lists them.`,
    };
  }
  return { ok: true, addresses };
}

/**
 * A `lookup` for http(s).request that resolves like the system does and refuses blocked addresses, so the
 * connection goes to an address that was checked.
 */
export function checkedLookup(allowed: Cidr[]): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, family: options.family as 0 | 4 | 6 | undefined })
      .then((found) => {
        const ok = found.filter((a) => !isBlockedAddress(a.address, allowed));
        if (ok.length === 0 || ok.length !== found.length) {
          const error = Object.assign(new Error(`refused: ${hostname} resolves to a blocked address`), {
            code: "EWEBHOOKBLOCKED",
          });
          callback(error, "", 4);
          return;
        }
        if (options.all) (callback as unknown as (e: null, a: typeof ok) => void)(null, ok);
        else callback(null, ok[0]?.address ?? "", ok[0]?.family ?? 4);
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, "", 4));
  };
}
