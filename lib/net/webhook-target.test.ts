import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseTrustedProxies } from "./client-address";
import { checkWebhookTarget, isBlockedAddress } from "./webhook-target";

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
