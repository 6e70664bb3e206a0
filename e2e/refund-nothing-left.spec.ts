import { answerOverApi, expect, openReady, pausedThread, test } from "./fixtures";

/*
 * Nothing left to refund: an order refunded in full asked again. The approval may only be rejected — "Approve" and
 * "Approve smaller amount" are both closed, and the form says why (the server would refuse anyway).
 */
test("an order refunded in full: approve and approve-smaller-amount are closed, reject stays open", async ({
  page,
}) => {
  const first = await pausedThread(page, "My headphones from ORD-1002 are broken, please refund them.");
  await answerOverApi(page, first, "refund_approval", { decision: "approve" });
  await answerOverApi(page, first, "confirm_email", { choice: "dont_send" });

  const again = await pausedThread(page, "The headphones from ORD-1002 broke again, refund me please.");
  await openReady(page, `/threads/${again}`, "thread-page");
  const approval = page.getByTestId("decision-refund_approval");
  await expect(approval.getByTestId("refundable")).toHaveAttribute("data-refundable-cents", "0");
  await expect(approval.getByTestId("approve")).toBeDisabled();
  await expect(approval.getByTestId("approve-partial")).toBeDisabled();
  await expect(approval.getByTestId("partial-amount")).toBeDisabled();
  await expect(approval.getByTestId("reject")).toBeEnabled();
});
