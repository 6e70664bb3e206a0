import fc from "fast-check";
import { z } from "zod";
import { refundEditableState } from "@/lib/graphs/refund/fork-rules";
import { checkValues, forkFields, readField } from "./fork-schema";

const fields = forkFields(z.toJSONSchema(refundEditableState, { io: "input", unrepresentable: "any" }));
const field = (name: string) => {
  const f = fields.find((x) => x.name === name);
  if (!f) throw new Error(`no field ${name}`);
  return f;
};

describe("the fork form, generated from the refund agent's editable state", () => {
  it("has a field per editable key, of the key's kind", () => {
    expect(fields.map((f) => [f.name, f.kind, f.nullable])).toEqual([
      ["customerMessage", "text", false],
      ["orderRef", "text", true],
      ["intent", "choice", false],
      ["reason", "text", false],
      ["requested", "integer", true],
    ]);
    expect(field("intent").choices).toEqual(["refund", "other"]);
  });

  it("reads any whole number of cents in bounds, empty as none, and refuses anything else in words", () => {
    const requested = field("requested");
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2_147_483_647 }), (n) => {
        expect(readField(requested, String(n))).toEqual({ ok: true, value: n });
      }),
    );
    fc.assert(
      fc.property(
        fc.string().filter((s) => s.trim() !== "" && !/^-?\d+(\.\d+)?$/.test(s.trim())),
        (s) => {
          expect(readField(requested, s)).toEqual({ ok: false, error: "must be a number" });
        },
      ),
    );
    expect(readField(requested, "")).toEqual({ ok: true, value: null });
    expect(readField(requested, "0")).toEqual({ ok: false, error: "must be more than 0" });
    expect(readField(requested, "12.5")).toEqual({ ok: false, error: "must be a whole number" });
    expect(readField(field("orderRef"), "ORD-12")).toMatchObject({ ok: false });
    expect(readField(field("orderRef"), "ORD-1234")).toEqual({ ok: true, value: "ORD-1234" });
    expect(readField(field("customerMessage"), "")).toEqual({ ok: false, error: "must not be empty" });
  });

  it("checks the JSON box's values against the same rules", () => {
    expect(checkValues(fields, { requested: "lots" })).toBe("requested must be a number");
    expect(checkValues(fields, { requested: 0 })).toBe("requested must be more than 0");
    expect(checkValues(fields, { intent: "maybe" })).toBe("intent must be one of refund, other");
    expect(checkValues(fields, { requested: 1000, intent: "refund", orderRef: null })).toBeNull();
  });
});
