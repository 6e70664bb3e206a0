import fc from "fast-check";
import { z } from "zod";
import { refundEditableState } from "@/lib/agents/refund/fork-rules";
import { forkFields, readField } from "./fork-schema";

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
    expect(readField(requested, "12.5")).toEqual({ ok: false, error: "must be a whole number" });
    // Bounds and formats are the server's to say (in the agent's words): a value of the right kind is sent to it.
    expect(readField(requested, "0")).toEqual({ ok: true, value: 0 });
    expect(readField(field("orderRef"), "ORD-12")).toEqual({ ok: true, value: "ORD-12" });
    expect(readField(field("customerMessage"), "")).toEqual({ ok: true, value: "" });
  });
});
