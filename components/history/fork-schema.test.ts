import fc from "fast-check";
import { z } from "zod";
import { refundEditableState } from "@/lib/agents/refund/fork-rules";
import { forkFields, readField, showField } from "./fork-schema";

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

  it("reads an amount typed in the currency into exact cents, empty as none, and refuses anything else in words", () => {
    const requested = field("requested");
    expect(requested.widget).toBe("money");
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2_147_483_647 }), (cents) => {
        // What the field shows of an amount reads back to that amount, to the cent.
        expect(readField(requested, showField(cents, requested))).toEqual({ ok: true, value: cents });
      }),
    );
    fc.assert(
      fc.property(
        fc.string().filter((s) => s.trim() !== "" && !/^-?\d+([.,]\d{1,2})?$/.test(s.trim())),
        (s) => {
          expect(readField(requested, s)).toEqual({ ok: false, error: "must be an amount such as 12.50" });
        },
      ),
    );
    expect(showField(24_900, requested)).toBe("249.00");
    expect(readField(requested, "")).toEqual({ ok: true, value: null });
    expect(readField(requested, "12.5")).toEqual({ ok: true, value: 1250 });
    expect(readField(requested, "12,05")).toEqual({ ok: true, value: 1205 });
    expect(readField(requested, "12.505").ok).toBe(false);
    // Bounds and formats are the server's to say (in the agent's words): a value of the right kind is sent to it.
    expect(readField(requested, "0")).toEqual({ ok: true, value: 0 });
    expect(readField(field("orderRef"), "ORD-12")).toEqual({ ok: true, value: "ORD-12" });
    expect(readField(field("customerMessage"), "")).toEqual({ ok: true, value: "" });
  });
});
