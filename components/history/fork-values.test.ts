import { parseForkValues } from "./fork-values";

const channels = ["requested", "decision", "orderRef"];

describe("parseForkValues", () => {
  it("reads nothing, or an empty object, as no edits", () => {
    expect(parseForkValues("", channels)).toEqual({ ok: true, values: undefined });
    expect(parseForkValues("  {} ", channels)).toEqual({ ok: true, values: undefined });
  });

  it("accepts an object of known channels", () => {
    expect(parseForkValues('{"requested": 10000, "orderRef": null}', channels)).toEqual({
      ok: true,
      values: { requested: 10000, orderRef: null },
    });
  });

  it("refuses invalid JSON, non-objects and unknown keys (messages included)", () => {
    expect(parseForkValues("{requested: 1}", channels).ok).toBe(false);
    for (const text of ["[1]", "null", "42", '"x"']) {
      expect(parseForkValues(text, channels)).toMatchObject({
        ok: false,
        error: expect.stringContaining("object"),
      });
    }
    expect(parseForkValues('{"messages": []}', channels)).toMatchObject({
      ok: false,
      error: expect.stringContaining("messages"),
    });
  });
});
