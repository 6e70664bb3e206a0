import { randomBytes } from "node:crypto";
import fc from "fast-check";
import {
  localKeyService,
  newDataKey,
  newKeysFileText,
  open,
  parseKeysFile,
  parseMasterKey,
  seal,
} from "./data-keys";

/* The envelope encryption of personal data (issue 49): sealing, wrapping, and the keys' formats. */

const key = () => randomBytes(32);

it("opens what it sealed, for any bytes and any binding", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 4096 }), fc.string(), (bytes, aad) => {
      const k = key();
      const sealed = seal(k, bytes, aad);
      expect(Buffer.from(open(k, sealed, aad))).toEqual(Buffer.from(bytes));
      // Never the plaintext in the sealed bytes (beyond chance for tiny inputs).
      if (bytes.length >= 8) expect(sealed.includes(Buffer.from(bytes))).toBe(false);
    }),
    { numRuns: 200 },
  );
});

it("refuses a sealed value opened with another key, another binding, or any byte changed", () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 1, maxLength: 512 }),
      fc.string({ minLength: 1 }),
      fc.nat(),
      fc.integer({ min: 1, max: 255 }),
      (bytes, aad, at, delta) => {
        const k = key();
        const sealed = seal(k, bytes, aad);
        expect(() => open(key(), sealed, aad)).toThrow();
        expect(() => open(k, sealed, `${aad}x`)).toThrow();
        const tampered = Buffer.from(sealed);
        const i = at % tampered.length;
        tampered[i] = ((tampered[i] ?? 0) + delta) % 256;
        expect(() => open(k, tampered, aad)).toThrow();
        expect(() => open(k, sealed.subarray(0, 20), aad)).toThrow();
      },
    ),
    { numRuns: 200 },
  );
});

it("wraps under the current master key; a retired one still unwraps; an unknown one is 503 key_service", async () => {
  const old = { id: "old", key: key() };
  const current = { id: "new", key: key() };
  const before = localKeyService([old]);
  const dataKey = newDataKey();
  const wrappedOld = await before.wrap(dataKey);
  expect(wrappedOld.keyId).toBe("old");
  expect(wrappedOld.wrapped.includes(dataKey)).toBe(false);

  const during = localKeyService([current, old]);
  expect(await during.unwrap("old", wrappedOld.wrapped)).toEqual(dataKey);
  const rewrapped = await during.wrap(dataKey);
  expect(rewrapped.keyId).toBe("new");

  const after = localKeyService([current]);
  expect(await after.unwrap("new", rewrapped.wrapped)).toEqual(dataKey);
  await expect(after.unwrap("old", wrappedOld.wrapped)).rejects.toMatchObject({
    code: "unavailable:key_service",
  });
  // A wrapped key presented under another id does not unwrap (the id is bound).
  await expect(
    localKeyService([{ id: "other", key: old.key }]).unwrap("other", wrappedOld.wrapped),
  ).rejects.toThrow();
});

it("reads master keys and keys files, and says what is wrong with a malformed one", () => {
  const text = `k1:${randomBytes(32).toString("base64")}`;
  expect(parseMasterKey(text).id).toBe("k1");
  for (const bad of [
    "",
    "k1",
    `:${randomBytes(32).toString("base64")}`,
    `k1:${randomBytes(16).toString("base64")}`,
    `bad id:${randomBytes(32).toString("base64")}`,
  ])
    expect(() => parseMasterKey(bad), bad).toThrow(/DATA_MASTER_KEY/);
  const file = parseKeysFile(newKeysFileText(new Date("2026-12-07T00:00:00Z")), "f");
  expect(file.master.id).toBe("k20261207");
  expect(file.index).toHaveLength(32);
  expect(file.retired).toEqual([]);
  expect(() => parseKeysFile("index=x", "f")).toThrow();
  expect(() => parseKeysFile(`${newKeysFileText()}colour=blue\n`, "f")).toThrow(/unknown line/);
});

it("never seals two values under one IV, across many refills of the IV pool", () => {
  const k = key();
  const ivs = new Set<string>();
  // 4 KiB of random bytes make 341 IVs: 3,000 seals cross the pool's refill several times.
  for (let i = 0; i < 3_000; i++)
    ivs.add(
      seal(k, Buffer.from([i & 255]), "x")
        .subarray(0, 12)
        .toString("hex"),
    );
  expect(ivs.size).toBe(3_000);
});
