import {
  clientAddress,
  formatIp,
  inCidr,
  normalizeIp,
  parseCidr,
  parseIp,
  parseTrustedProxies,
} from "./client-address";

const cidr = (text: string) => {
  const parsed = parseCidr(text);
  if (!parsed) throw new Error(`bad test network ${text}`);
  return parsed;
};
const ip = (text: string) => {
  const parsed = parseIp(text);
  if (!parsed) throw new Error(`bad test address ${text}`);
  return parsed;
};

describe("IP addresses", () => {
  it("parses and canonicalises IPv4 and IPv6", () => {
    expect(normalizeIp("192.0.2.1")).toBe("192.0.2.1");
    expect(normalizeIp(" 10.0.0.255 ")).toBe("10.0.0.255");
    expect(normalizeIp("2001:DB8:0:0:0:0:0:1")).toBe("2001:db8::1");
    expect(normalizeIp("2001:db8:0:0:1:0:0:1")).toBe("2001:db8::1:0:0:1");
    expect(normalizeIp("::")).toBe("::");
    expect(normalizeIp("::1")).toBe("::1");
    expect(normalizeIp("fe80::1%eth0")).toBe("fe80::1");
    expect(normalizeIp("1:2:3:4:5:6:7:8")).toBe("1:2:3:4:5:6:7:8");
    expect(normalizeIp("1:0:3:4:5:6:7:8")).toBe("1:0:3:4:5:6:7:8");
  });

  it("treats IPv4-mapped IPv6 (a dual-stack socket's peer) as the IPv4 address", () => {
    expect(normalizeIp("::ffff:127.0.0.1")).toBe("127.0.0.1");
    expect(normalizeIp("::FFFF:7f00:1")).toBe("127.0.0.1");
    expect(parseIp("::ffff:203.0.113.9")).toEqual(Uint8Array.from([203, 0, 113, 9]));
  });

  it("refuses what is not an address", () => {
    for (const bad of [
      "",
      " ",
      "1.2.3",
      "1.2.3.4.5",
      "256.0.0.1",
      "01.2.3.4",
      "1.2.3.4:80",
      "::1::2",
      "12345::",
      "g::1",
      "localhost",
      "1.2.3.4/8",
      "unknown",
    ]) {
      expect([bad, parseIp(bad)]).toEqual([bad, null]);
    }
  });

  it("round-trips every canonical form", () => {
    for (const text of ["0.0.0.0", "255.255.255.255", "2001:db8::", "0:0:2::1", "a:b::c:d"]) {
      expect(formatIp(ip(text))).toBe(text);
    }
  });
});

describe("networks", () => {
  it("matches IPv4 and IPv6 networks by prefix", () => {
    expect(inCidr(ip("10.1.2.3"), cidr("10.0.0.0/8"))).toBe(true);
    expect(inCidr(ip("11.1.2.3"), cidr("10.0.0.0/8"))).toBe(false);
    expect(inCidr(ip("192.168.1.130"), cidr("192.168.1.128/25"))).toBe(true);
    expect(inCidr(ip("192.168.1.127"), cidr("192.168.1.128/25"))).toBe(false);
    expect(inCidr(ip("203.0.113.7"), cidr("203.0.113.7"))).toBe(true);
    expect(inCidr(ip("203.0.113.8"), cidr("203.0.113.7"))).toBe(false);
    expect(inCidr(ip("1.2.3.4"), cidr("0.0.0.0/0"))).toBe(true);
    expect(inCidr(ip("fd12:3456::1"), cidr("fd00::/8"))).toBe(true);
    expect(inCidr(ip("fe80::1"), cidr("fd00::/8"))).toBe(false);
    expect(inCidr(ip("2001:db8::1"), cidr("2001:db8::/127"))).toBe(true);
    expect(inCidr(ip("2001:db8::2"), cidr("2001:db8::/127"))).toBe(false);
    expect(inCidr(ip("::ffff:10.9.8.7"), cidr("10.0.0.0/8"))).toBe(true);
    expect(inCidr(ip("10.9.8.7"), cidr("::ffff:10.0.0.0/104"))).toBe(true);
  });

  it("never matches across families", () => {
    expect(inCidr(ip("::1"), cidr("0.0.0.0/0"))).toBe(false);
    expect(inCidr(ip("127.0.0.1"), cidr("::/0"))).toBe(false);
  });

  it("refuses malformed networks", () => {
    for (const bad of [
      "10.0.0.0/33",
      "::/129",
      "10.0.0.0/",
      "10.0.0.0/-1",
      "10.0.0.0/8/8",
      "10.0.0.0/ 8",
      "x/8",
      "/8",
    ]) {
      expect([bad, parseCidr(bad)]).toEqual([bad, null]);
    }
    expect(parseCidr("::ffff:10.0.0.0/95")).toBeNull();
  });

  it("parses TRUSTED_PROXIES and names every bad entry", () => {
    expect(parseTrustedProxies(undefined)).toEqual([]);
    expect(parseTrustedProxies(" , ")).toEqual([]);
    expect(parseTrustedProxies("10.0.0.0/8, ::1").map((c) => [formatIp(c.bytes), c.prefix])).toEqual([
      ["10.0.0.0", 8],
      ["::1", 128],
    ]);
    expect(() => parseTrustedProxies("10.0.0.0/8, proxy.internal, 1.2.3.4/40")).toThrow(
      'not an IP address or CIDR network: "proxy.internal", "1.2.3.4/40"',
    );
  });
});

describe("the client address", () => {
  const none = parseTrustedProxies("");
  const lb = parseTrustedProxies("10.0.0.0/8, fd00::/8");

  it("is the socket's peer when no proxy is trusted, whatever X-Forwarded-For says", () => {
    expect(clientAddress({ peer: "127.0.0.1", forwardedFor: "203.0.113.7", trustedProxies: none })).toBe(
      "127.0.0.1",
    );
    expect(clientAddress({ peer: "::ffff:192.0.2.5", forwardedFor: null, trustedProxies: none })).toBe(
      "192.0.2.5",
    );
  });

  it("is the peer when the peer is not a trusted proxy", () => {
    expect(clientAddress({ peer: "198.51.100.1", forwardedFor: "203.0.113.7", trustedProxies: lb })).toBe(
      "198.51.100.1",
    );
  });

  it("walks from the right through trusted hops to the first untrusted one", () => {
    const walk = (forwardedFor: string | null) =>
      clientAddress({ peer: "10.0.0.2", forwardedFor, trustedProxies: lb });
    expect(walk("203.0.113.7")).toBe("203.0.113.7");
    expect(walk("6.6.6.6, 203.0.113.7")).toBe("203.0.113.7");
    expect(walk("6.6.6.6, 203.0.113.7, 10.1.1.1, fd00::5")).toBe("203.0.113.7");
    expect(walk("[2001:db8::7]:443, 10.1.1.1")).toBe("2001:db8::7");
    expect(walk("203.0.113.7:5555")).toBe("203.0.113.7");
    expect(walk("2001:DB8::7")).toBe("2001:db8::7");
  });

  it("stops at the last vouched-for address on a malformed or missing hop", () => {
    const walk = (forwardedFor: string | null) =>
      clientAddress({ peer: "10.0.0.2", forwardedFor, trustedProxies: lb });
    expect(walk(null)).toBe("10.0.0.2");
    expect(walk("")).toBe("10.0.0.2");
    expect(walk("203.0.113.7, unknown")).toBe("10.0.0.2");
    expect(walk("unknown, 10.3.3.3")).toBe("10.3.3.3");
    expect(walk("10.5.5.5, 10.3.3.3")).toBe("10.5.5.5");
    expect(walk("203.0.113.7,,10.3.3.3")).toBe("203.0.113.7");
  });

  it("is null when the peer is unknown", () => {
    expect(clientAddress({ peer: undefined, forwardedFor: "203.0.113.7", trustedProxies: lb })).toBeNull();
    expect(clientAddress({ peer: "garbage", forwardedFor: "203.0.113.7", trustedProxies: lb })).toBeNull();
  });
});
