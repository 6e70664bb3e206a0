import { authedFetch, type Who } from "../support/auth";
import { pausedAtApproval } from "./client";
import { useTestServer } from "./setup";

/**
 * Before the click: `GET /api/threads/{id}` says, per pending decision, whether the caller may take the decision that
 * acts (approve, send) and why not — the same four-eyes and role rules the decision itself meets.
 */
describe("may decide (the rules before the click)", () => {
  const ctx = useTestServer("maydecide");

  const paused = (order: string, startedBy: Who) => pausedAtApproval(ctx.server!.url, order, startedBy);

  const verdicts = async (threadId: string, who: Who) => {
    const res = await authedFetch(ctx.url(`/api/threads/${threadId}`), {}, who);
    expect(res.status).toBe(200);
    return (await res.json()).mayDecide as { may: boolean; code?: string; reason?: string; action: string }[];
  };

  it("refuses an operator a refund above the four-eyes threshold, with the reason; a supervisor may", async () => {
    const threadId = await paused("ORD-1008", "intake");
    const [operator] = await verdicts(threadId, "operator");
    expect(operator).toMatchObject({
      action: "refund_approval",
      may: false,
      code: "forbidden:four_eyes_supervisor",
    });
    expect(operator?.reason).toMatch(/need a supervisor/);
    expect((await verdicts(threadId, "supervisor"))[0]).toMatchObject({ may: true });
  });

  it("refuses whoever started the run (four-eyes) and a viewer (role)", async () => {
    const threadId = await paused("ORD-1002", "operator");
    expect((await verdicts(threadId, "operator"))[0]).toMatchObject({
      may: false,
      code: "forbidden:four_eyes_own_thread",
    });
    expect((await verdicts(threadId, "viewer"))[0]).toMatchObject({ may: false, code: "forbidden:role" });
    expect((await verdicts(threadId, "supervisor"))[0]).toMatchObject({ may: true });
  });
});
