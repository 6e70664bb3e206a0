import { isIPv4, isIPv6 } from "node:net";

/*
 * The client address of a request, from the socket's peer address and, only through proxies we were told to trust,
 * the X-Forwarded-For chain. Pure: no I/O, no environment (lib/platform/env.ts parses TRUSTED_PROXIES with this module).
 */

/** An IP network: the address bytes (4 for IPv4, 16 for IPv6) and how many leading bits must match. */
export interface Cidr {
  bytes: Uint8Array;
  prefix: number;
}

/**
 * The bytes of an IPv4 or IPv6 address, or null if `text` is not one. IPv4-mapped IPv6 (`::ffff:192.0.2.1`, what a
 * dual-stack socket reports) becomes the IPv4 address; an IPv6 zone (`fe80::1%eth0`) is dropped.
 */
export function parseIp(text: string): Uint8Array | null {
  const value = text.trim();
  if (isIPv4(value)) return Uint8Array.from(value.split(".").map(Number));
  const address = value.split("%", 1)[0] ?? "";
  if (!isIPv6(address)) return null;
  const bytes = ipv6Bytes(address.toLowerCase());
  if (!bytes) return null;
  const mapped = bytes.subarray(0, 12).every((b, i) => (i < 10 ? b === 0 : b === 0xff));
  return mapped ? bytes.slice(12) : bytes;
}

function ipv6Bytes(address: string): Uint8Array | null {
  let text = address;
  const tail: number[] = [];
  // A dotted IPv4 tail (`::ffff:1.2.3.4`) stands for the last two groups.
  const dotted = text.match(/:(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted?.[1]) {
    tail.push(...dotted[1].split(".").map(Number));
    text = `${text.slice(0, -dotted[1].length)}0:0`;
  }
  const [head = "", rest] = text.split("::");
  const left = head ? head.split(":") : [];
  const right = rest !== undefined && rest !== "" ? rest.split(":") : [];
  const missing = 8 - left.length - right.length;
  if (rest === undefined ? missing !== 0 : missing < 1) return null;
  const groups = [...left, ...Array<string>(rest === undefined ? 0 : missing).fill("0"), ...right];
  const bytes = new Uint8Array(16);
  for (const [i, group] of groups.entries()) {
    const n = Number.parseInt(group, 16);
    if (!/^[0-9a-f]{1,4}$/.test(group) || Number.isNaN(n)) return null;
    bytes[i * 2] = n >> 8;
    bytes[i * 2 + 1] = n & 0xff;
  }
  if (tail.length === 4) bytes.set(tail, 12);
  return bytes;
}

/** An address in its canonical text: dotted IPv4, or RFC 5952 IPv6 (lowercase, longest zero run as `::`). */
export function formatIp(bytes: Uint8Array): string {
  if (bytes.length === 4) return Array.from(bytes).join(".");
  const groups = Array.from({ length: 8 }, (_, i) => ((bytes[i * 2] ?? 0) << 8) | (bytes[i * 2 + 1] ?? 0));
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart === -1) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`;
}

/** The canonical form of an address, or null if it is not one. */
export function normalizeIp(text: string): string | null {
  const bytes = parseIp(text);
  return bytes ? formatIp(bytes) : null;
}

/** An address (`10.0.0.1`, a /32 or /128) or a network (`10.0.0.0/8`, `fd00::/8`); null if malformed. */
export function parseCidr(text: string): Cidr | null {
  const value = text.trim();
  const slash = value.indexOf("/");
  const address = slash === -1 ? value : value.slice(0, slash);
  const bytes = parseIp(address);
  if (!bytes) return null;
  const bits = bytes.length * 8;
  if (slash === -1) return { bytes, prefix: bits };
  const prefixText = value.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText)) return null;
  let prefix = Number(prefixText);
  // `::ffff:10.0.0.0/104` is the IPv4 network 10.0.0.0/8.
  const mappedV4 = bytes.length === 4 && address.includes(":");
  if (mappedV4) prefix -= 96;
  if (prefix < 0 || prefix > bits) return null;
  return { bytes, prefix };
}

/** Whether the address lies in the network (IPv4 and IPv6 never match each other). */
export function inCidr(address: Uint8Array, network: Cidr): boolean {
  if (address.length !== network.bytes.length) return false;
  let left = network.prefix;
  for (let i = 0; left > 0; i++, left -= 8) {
    const mask = left >= 8 ? 0xff : (0xff << (8 - left)) & 0xff;
    if (((address[i] ?? 0) & mask) !== ((network.bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

/**
 * A comma-separated list of trusted proxy addresses/networks (TRUSTED_PROXIES). Empty or blank: none. Throws with
 * every malformed entry named, so a typo fails at start-up instead of silently trusting nothing (or everything).
 */
export function parseTrustedProxies(value: string | undefined): Cidr[] {
  const entries = (value ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  const parsed = entries.map((entry) => ({ entry, cidr: parseCidr(entry) }));
  const bad = parsed.filter((p) => !p.cidr).map((p) => JSON.stringify(p.entry));
  if (bad.length > 0) throw new Error(`not an IP address or CIDR network: ${bad.join(", ")}`);
  return parsed.map((p) => p.cidr as Cidr);
}

/** One X-Forwarded-For hop without a port (`192.0.2.1:4711`, `[2001:db8::1]:443`). */
function hopAddress(hop: string): Uint8Array | null {
  const value = hop.trim();
  const bracketed = value.match(/^\[([^\]]+)\](?::\d+)?$/);
  if (bracketed?.[1]) return parseIp(bracketed[1]);
  const v4WithPort = value.match(/^(\d+\.\d+\.\d+\.\d+):\d+$/);
  return parseIp(v4WithPort?.[1] ?? value);
}

/**
 * The client's address: the socket's peer, unless the peer is a trusted proxy; then X-Forwarded-For is walked from
 * the right (each trusted proxy appended the address that connected to it), skipping trusted hops, and the first
 * untrusted one is the client. Entries left of it are whatever the client sent and are never read. A malformed hop
 * stops the walk at the last address a trusted proxy vouched for, so garbage can only make the limit stricter.
 * Returns null when the peer address itself is unknown.
 */
export function clientAddress({
  peer,
  forwardedFor,
  trustedProxies,
}: {
  peer: string | null | undefined;
  forwardedFor: string | null | undefined;
  trustedProxies: readonly Cidr[];
}): string | null {
  const peerBytes = peer ? parseIp(peer) : null;
  if (!peerBytes) return null;
  const trusted = (bytes: Uint8Array) => trustedProxies.some((network) => inCidr(bytes, network));
  let current = formatIp(peerBytes);
  if (!trusted(peerBytes)) return current;
  const hops = (forwardedFor ?? "").split(",").filter((h) => h.trim() !== "");
  for (let i = hops.length - 1; i >= 0; i--) {
    const bytes = hopAddress(hops[i] ?? "");
    if (!bytes) return current;
    current = formatIp(bytes);
    if (!trusted(bytes)) return current;
  }
  return current;
}
