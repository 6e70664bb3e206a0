import { titleFrom } from "./tickets";

describe("titleFrom", () => {
  it("keeps a short message whole", () => {
    expect(titleFrom("Broken lamp, refund please")).toBe("Broken lamp, refund please");
  });
  it("cuts a long one at a word, never mid-word, and says it was cut", () => {
    const title = titleFrom(`${"The headphones from ORD-1002 stopped charging after a week ".repeat(3)}`);
    expect(title.length).toBeLessThanOrEqual(80);
    expect(title.endsWith("…")).toBe(true);
    expect(title).toBe("The headphones from ORD-1002 stopped charging after a week The headphones from…");
  });
});
