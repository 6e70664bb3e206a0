import fc from "fast-check";
import type { SessionUser } from "../contract/roles";
import { cachedSessionUser } from "./session-cache";

const user: SessionUser = { id: "u1", email: "v@example.com", name: "V", role: "viewer" };

describe("cachedSessionUser", () => {
  it("answers a request without cookies at once: no session lookup, no user", async () => {
    let lookups = 0;
    const lookup = async () => {
      lookups += 1;
      return { user, expiresAt: new Date(Date.now() + 60_000) };
    };
    expect(await cachedSessionUser(null, lookup)).toBeNull();
    expect(await cachedSessionUser("", lookup)).toBeNull();
    expect(lookups).toBe(0);
  });

  it("asks better-auth about any cookie header it has not verified (generated headers)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1 }), async (cookie) => {
        let lookups = 0;
        const found = await cachedSessionUser(cookie, async () => {
          lookups += 1;
          return null;
        });
        expect(found).toBeNull();
        expect(lookups).toBe(1);
      }),
    );
  });
});
