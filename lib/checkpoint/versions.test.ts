import fc from "fast-check";
import { nextChannelVersion } from "./versions";

const VERSION = /^\d{16}\.[0-9a-f]{12}$/;
// Counters stay below 10^15: safe integers, and far beyond any channel's number of steps.
const counter = fc.integer({ min: 0, max: 10 ** 15 });

describe("nextChannelVersion", () => {
  it("starts a channel at counter 1 and accepts the integer versions of other savers", () => {
    expect(nextChannelVersion(undefined)).toMatch(/^0{15}1\.[0-9a-f]{12}$/);
    expect(nextChannelVersion(41).startsWith("0000000000000042.")).toBe(true);
  });

  it("steps the counter and keeps the format", () => {
    fc.assert(
      fc.property(counter, (n) => {
        const version = nextChannelVersion(n);
        expect(version).toMatch(VERSION);
        expect(Number.parseInt(version, 10)).toBe(n + 1);
        expect(Number.parseInt(nextChannelVersion(version), 10)).toBe(n + 2);
      }),
    );
  });

  it("sorts as text the way its counter sorts as a number", () => {
    fc.assert(
      fc.property(counter, counter, (a, b) => {
        fc.pre(a !== b);
        const [va, vb] = [nextChannelVersion(a), nextChannelVersion(b)];
        expect(va < vb).toBe(a < b);
      }),
    );
  });

  it("increases monotonically along one channel", () => {
    let version = nextChannelVersion(undefined);
    for (let i = 0; i < 500; i++) {
      const next = nextChannelVersion(version);
      expect(next > version).toBe(true);
      version = next;
    }
  });

  it("is unique per call, so two forks stepping the same counter never share a blob key", () => {
    const from = nextChannelVersion(7);
    const versions = new Set(Array.from({ length: 2000 }, () => nextChannelVersion(from)));
    expect(versions.size).toBe(2000);
  });

  it("refuses a version it cannot read", () => {
    expect(() => nextChannelVersion("abc")).toThrow(/Unrecognised channel version/);
    expect(() => nextChannelVersion("")).toThrow(/Unrecognised channel version/);
  });
});
