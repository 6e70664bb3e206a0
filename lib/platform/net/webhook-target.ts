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

/**
 * Networks no webhook may reach by default: unspecified, loopback, private, carrier NAT, link-local, multicast,
 * reserved. An IPv6 address that carries an IPv4 one is also judged by the IPv4 one ({@link embeddedIpv4}).
 */
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
  // IPv4-compatible (deprecated since RFC 4291, nothing legitimate uses it) with `::` and `::1` in it: the whole range.
  "::/96",
  "fc00::/7",
  "fe80::/10",
  "ff00::/8",
  // NAT64's well-known prefix (RFC 6052) and the local-use one (RFC 8215): a gateway of the network we run in.
  "64:ff9b::/96",
  "64:ff9b:1::/48",
].map((text) => parseCidr(text) as Cidr);

/**
 * The IPv4 address an IPv6 address carries, in every form that hands a packet to that IPv4 address: IPv4-mapped
 * `::ffff:a.b.c.d` (parseIp already reads it as IPv4), IPv4-translated `::ffff:0:a.b.c.d` (RFC 2765), IPv4-compatible
 * `::a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`, and 6to4 `2002:AABB:CCDD::/48` (the IPv4 address is bytes 2..5). Null for
 * an IPv6 address that carries none, and for IPv4 bytes. The one place these forms are known: a refused IPv4 address
 * stays refused however it is written.
 */
export function embeddedIpv4(bytes: Uint8Array): Uint8Array | null {
  if (bytes.length !== 16) return null;
  const zeros = (from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0);
  const last32 = () => bytes.slice(12, 16);
  const at = (i: number, value: number) => bytes[i] === value;
  if (zeros(0, 10) && at(10, 0xff) && at(11, 0xff)) return last32(); // mapped
  if (zeros(0, 8) && at(8, 0xff) && at(9, 0xff) && zeros(10, 12)) return last32(); // translated
  if (zeros(0, 12)) return last32(); // compatible
  if (at(0, 0x00) && at(1, 0x64) && at(2, 0xff) && at(3, 0x9b) && zeros(4, 12)) return last32(); // NAT64
  if (at(0, 0x20) && at(1, 0x02)) return bytes.slice(2, 6); // 6to4
  return null;
}

/** Whether the address (bytes) is refused: not allowed, and in a refused network or carrying a refused IPv4 address. */
function isBlockedBytes(bytes: Uint8Array, allowed: Cidr[]): boolean {
  if (allowed.some((network) => inCidr(bytes, network))) return false;
  if (BLOCKED.some((network) => inCidr(bytes, network))) return true;
  const carried = embeddedIpv4(bytes);
  return carried !== null && isBlockedBytes(carried, allowed);
}

/**
 * Whether `address` (text) is one a webhook may not reach, given the allowed networks. Unparseable: blocked. An
 * allowed IPv4 network is allowed mapped, translated and as 6to4 too (the list names hosts, not spellings); the
 * IPv4-compatible range and NAT64's prefixes only when the list names them as IPv6.
 */
export function isBlockedAddress(address: string, allowed: Cidr[]): boolean {
  const bytes = parseIp(address);
  return bytes ? isBlockedBytes(bytes, allowed) : true;
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
      reason: `The webhook's host ${host} resolves to ${blocked.map(described).join(", ") || "nothing"}: loopback, link-local, private and unspecified addresses are refused unless WEBHOOK_ALLOW_PRIVATE lists them.`,
    };
  }
  return { ok: true, addresses };
}

/** An address as the refusal names it: canonical, with the IPv4 address it carries (`::7f00:1 (127.0.0.1)`). */
function described(address: string): string {
  const bytes = parseIp(address) ?? new Uint8Array();
  const carried = embeddedIpv4(bytes);
  return carried ? `${formatIp(bytes)} (${formatIp(carried)})` : formatIp(bytes);
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
