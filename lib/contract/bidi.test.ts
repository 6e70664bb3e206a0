import { hasBidiControls, showControls } from "./bidi";

describe("showControls", () => {
  it("shows a right-to-left override instead of applying it", () => {
    expect(showControls("Refund \u202Eevil")).toBe("Refund [U+202E]evil");
    expect(hasBidiControls("Refund \u202Eevil")).toBe(true);
    expect(hasBidiControls("Réfund שלום")).toBe(false);
  });
});
