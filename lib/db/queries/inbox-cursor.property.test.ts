import fc from "fast-check";
import { garbageCursor, hostileJson, tamperedInboxCursor } from "@/e2e/support/hostile";
import { AppError } from "@/lib/contract/errors";
import { INBOX_THREAD_STATUSES, type InboxStatus } from "@/lib/contract/wire";
import { decodeInboxCursor, encodeInboxCursor } from "./inbox";

/*
 * The inbox cursor decoder against tampered cursors (issue 9): it returns a key of the asked listing with a real
 * instant and a plausible id, or refuses with a 4xx AppError — never anything else. Seeded (FUZZ_SEED).
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_901);
const runs = { seed: SEED, numRuns: 2000 };
const MODES: InboxStatus[] = ["pending", ...INBOX_THREAD_STATUSES];
const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: ids must not carry control characters
const CONTROL = /[\u0000-\u001f\u007f]/;

const cursor = fc.oneof(
  tamperedInboxCursor,
  garbageCursor,
  fc.string({ unit: "binary" }),
  hostileJson.map((v) => Buffer.from(JSON.stringify(v) ?? "").toString("base64url")),
);

describe("decodeInboxCursor", () => {
  it("returns a sound key of the asked listing or refuses with a 4xx AppError", () => {
    fc.assert(
      fc.property(cursor, fc.constantFrom(...MODES), (text, mode) => {
        try {
          const key = decodeInboxCursor(text, mode);
          return (
            key.m === mode &&
            ISO_MICROS.test(key.t) &&
            !Number.isNaN(Date.parse(key.t)) &&
            key.i.length >= 1 &&
            key.i.length <= 200 &&
            !CONTROL.test(key.i)
          );
        } catch (error) {
          return error instanceof AppError && error.status >= 400 && error.status < 500;
        }
      }),
      runs,
    );
  });

  it("decodes what it encoded", () => {
    const key = fc.record({
      m: fc.constantFrom(...MODES),
      t: fc
        .date({
          min: new Date("1970-01-01T00:00:00Z"),
          max: new Date("9999-12-30T00:00:00Z"),
          noInvalidDate: true,
        })
        .chain((d) =>
          fc
            .integer({ min: 0, max: 999 })
            .map((us) => d.toISOString().replace("Z", `${`${us}`.padStart(3, "0")}Z`)),
        ),
      i: fc.string({ unit: "grapheme", minLength: 1, maxLength: 50 }).filter((s) => !CONTROL.test(s)),
    });
    fc.assert(
      fc.property(key, (k) => {
        const back = decodeInboxCursor(encodeInboxCursor(k), k.m);
        return back.m === k.m && back.t === k.t && back.i === k.i;
      }),
      runs,
    );
  });
});
