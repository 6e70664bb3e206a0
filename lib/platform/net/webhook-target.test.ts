import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseIp, parseTrustedProxies } from "./client-address";
import { checkWebhookTarget, embeddedIpv4, isBlockedAddress } from "./webhook-target";

/** The rule in plain code, for IPv4: the ranges a webhook may not reach by default. */
function blockedV4([a, b, c]: number[]): boolean {
  const x = a as number;
  const y = b as number;
  return (
    x === 0 ||
    x === 10 ||
    x === 127 ||
    (x === 100 && y >= 64 && y <= 127) ||
    (x === 169 && y === 254) ||
    (x === 172 && y >= 16 && y <= 31) ||
    (x === 192 && y === 0 && c === 0) ||
    (x === 192 && y === 168) ||
    (x === 198 && (y === 18 || y === 19)) ||
    x >= 224
  );
}

const octet = fc.integer({ min: 0, max: 255 });
const v4 = fc.tuple(octet, octet, octet, octet);

/** The refused IPv4 networks, written out again: every one of them must stay refused however it is written. */
const BLOCKED_V4 = [
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
];

/** An address inside one of the refused IPv4 networks: the network's bits, random host bits. */
const blockedAddress = fc
  .tuple(fc.constantFrom(...BLOCKED_V4), fc.integer({ min: 0, max: 0xffffffff }))
  .map(([network, random]) => {
    const [base = "", bits = "0"] = network.split("/");
    const prefix = Number(bits);
    const net = base.split(".").reduce((n, part) => n * 256 + Number(part), 0);
    const hostMask = prefix === 0 ? 0xffffffff : 2 ** (32 - prefix) - 1;
    const value = (net - (net % (hostMask + 1)) + (random & hostMask)) >>> 0;
    return [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff];
  });
const publicAddress = v4.filter((parts) => !blockedV4(parts));

const hex16 = (hi: number, lo: number) => ((hi << 8) | lo).toString(16);
const group = fc.integer({ min: 0, max: 0xffff }).map((g) => g.toString(16));
/** Every IPv6 way of carrying an IPv4 address `a.b.c.d`, in dotted and in hex spelling, with random case. */
type Embedding = (parts: number[], rest: string[]) => string;
const EMBEDDINGS: Record<string, Embedding> = {
  "mapped, dotted": (p) => `::ffff:${p.join(".")}`,
  "mapped, hex": ([a, b, c, d]) => `::ffff:${hex16(a!, b!)}:${hex16(c!, d!)}`,
  "mapped, written out": ([a, b, c, d]) => `0:0:0:0:0:ffff:${hex16(a!, b!)}:${hex16(c!, d!)}`,
  "compatible, dotted": (p) => `::${p.join(".")}`,
  "compatible, hex": ([a, b, c, d]) => `::${hex16(a!, b!)}:${hex16(c!, d!)}`,
  "translated, dotted": (p) => `::ffff:0:${p.join(".")}`,
  "translated, hex": ([a, b, c, d]) => `0::ffff:0:${hex16(a!, b!)}:${hex16(c!, d!)}`,
  "NAT64, dotted": (p) => `64:ff9b::${p.join(".")}`,
  "NAT64, hex": ([a, b, c, d]) => `64:ff9b::${hex16(a!, b!)}:${hex16(c!, d!)}`,
  // 6to4: the IPv4 address is the 2nd and 3rd group; the site's subnet and interface id are anything.
  "6to4": ([a, b, c, d], rest) => `2002:${hex16(a!, b!)}:${hex16(c!, d!)}:${rest.join(":")}`,
};
const embedding = fc.constantFrom(...Object.keys(EMBEDDINGS));
const written = (name: string, parts: number[], rest: string[], upper: boolean) => {
  const text = (EMBEDDINGS[name] as Embedding)(parts, rest);
  return upper ? text.toUpperCase() : text;
};
const tail = fc.array(group, { minLength: 5, maxLength: 5 });

describe("webhook targets: no loopback, link-local, private or unspecified address", () => {
  it("IPv4 and IPv4-mapped IPv6 follow the rule (generated)", () => {
    fc.assert(
      fc.property(v4, (parts) => {
        const text = parts.join(".");
        expect(isBlockedAddress(text, [])).toBe(blockedV4(parts));
        expect(isBlockedAddress(`::ffff:${text}`, [])).toBe(blockedV4(parts));
      }),
      { seed: 27, numRuns: 2_000 },
    );
  });

  it("an IPv4 address of a refused network is refused however IPv6 carries it (generated)", () => {
    fc.assert(
      fc.property(blockedAddress, embedding, tail, fc.boolean(), (parts, name, rest, upper) => {
        const text = written(name, parts, rest, upper);
        expect(isBlockedAddress(text, []), `${name}: ${text}`).toBe(true);
        // The one rule's input: the IPv4 address the IPv6 one carries (a mapped one is read as IPv4 already).
        const bytes = parseIp(text) as Uint8Array;
        expect(bytes.length === 4 ? bytes : embeddedIpv4(bytes), `${name}: ${text}`).toEqual(
          Uint8Array.from(parts),
        );
      }),
      { seed: 50, numRuns: 3_000 },
    );
  });

  it("as a URL's host too: http://[::127.0.0.1]:8080/ and every other embedding of a refused address (generated)", async () => {
    expect(await checkWebhookTarget("http://[::127.0.0.1]:8080/", [])).toMatchObject({ ok: false });
    expect(await checkWebhookTarget("http://[::ffff:0:10.0.0.1]/", [])).toMatchObject({ ok: false });
    expect(await checkWebhookTarget("http://[2002:a9fe:a9fe::1]/latest", [])).toMatchObject({ ok: false });
    await fc.assert(
      fc.asyncProperty(
        blockedAddress,
        embedding,
        tail,
        fc.boolean(),
        fc.integer({ min: 1, max: 65_535 }),
        async (parts, name, rest, upper, port) => {
          const url = `http://[${written(name, parts, rest, upper)}]:${port}/hook`;
          const check = await checkWebhookTarget(url, []);
          expect(check.ok, `${name}: ${url}`).toBe(false);
        },
      ),
      { seed: 50, numRuns: 1_000 },
    );
  });

  it("a public IPv4 address stays allowed mapped, translated or as 6to4; compatible and NAT64 are refused whole", async () => {
    await fc.assert(
      fc.asyncProperty(publicAddress, tail, fc.boolean(), async (parts, rest, upper) => {
        for (const name of [
          "mapped, dotted",
          "mapped, hex",
          "mapped, written out",
          "translated, dotted",
          "6to4",
        ]) {
          const text = written(name, parts, rest, upper);
          expect(isBlockedAddress(text, []), `${name}: ${text}`).toBe(false);
          expect(await checkWebhookTarget(`https://[${text}]/hook`, []), `${name}: ${text}`).toMatchObject({
            ok: true,
          });
        }
        // Deprecated (IPv4-compatible) or a gateway's (NAT64): nothing a webhook needs, refused whatever they carry.
        for (const name of ["compatible, dotted", "compatible, hex", "NAT64, dotted", "NAT64, hex"]) {
          const text = written(name, parts, rest, upper);
          expect(isBlockedAddress(text, []), `${name}: ${text}`).toBe(true);
        }
      }),
      { seed: 50, numRuns: 500 },
    );
  });

  it("WEBHOOK_ALLOW_PRIVATE's networks are allowed however IPv6 carries them, and only those", () => {
    const allowed = parseTrustedProxies("10.0.4.0/24");
    expect(isBlockedAddress("::ffff:10.0.4.9", allowed)).toBe(false);
    expect(isBlockedAddress("::ffff:0:10.0.4.9", allowed)).toBe(false);
    expect(isBlockedAddress("2002:a00:409::1", allowed)).toBe(false);
    expect(isBlockedAddress("2002:a00:509::1", allowed)).toBe(true);
    // The whole compatible range and NAT64's well-known prefix are refused by their own entries.
    expect(isBlockedAddress("::10.0.4.9", allowed)).toBe(true);
  });

  it("IPv6 loopback, unspecified, unique-local, link-local and multicast are blocked; global unicast is not", () => {
    for (const a of ["::1", "::", "fc00::1", "fd12:3456::1", "fe80::1", "ff02::1", "64:ff9b::7f00:1"])
      expect(isBlockedAddress(a, [])).toBe(true);
    for (const a of ["2001:4860:4860::8888", "2a00:1450:4001::1"])
      expect(isBlockedAddress(a, [])).toBe(false);
    expect(isBlockedAddress("not-an-address", [])).toBe(true);
  });

  it("WEBHOOK_ALLOW_PRIVATE lets the listed networks through, and only those", () => {
    const allowed = parseTrustedProxies("127.0.0.1,10.0.4.0/24");
    expect(isBlockedAddress("127.0.0.1", allowed)).toBe(false);
    expect(isBlockedAddress("127.0.0.2", allowed)).toBe(true);
    expect(isBlockedAddress("10.0.4.9", allowed)).toBe(false);
    expect(isBlockedAddress("10.0.5.9", allowed)).toBe(true);
  });

  it("a name is checked by what it resolves to (localhost), a literal as is", async () => {
    expect(await checkWebhookTarget("http://localhost:9/hook", [])).toMatchObject({ ok: false });
    expect(await checkWebhookTarget("http://[::1]:9/hook", [])).toMatchObject({ ok: false });
    expect(await checkWebhookTarget("http://169.254.169.254/latest", [])).toMatchObject({ ok: false });
    expect(await checkWebhookTarget("ftp://example.com/", [])).toMatchObject({ ok: false });
    expect(await checkWebhookTarget("http://8.8.8.8/hook", [])).toEqual({ ok: true, addresses: ["8.8.8.8"] });
  });
});
