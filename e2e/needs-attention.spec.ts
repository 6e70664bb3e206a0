import { readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { authDir } from "./auth/users";
import { expect, openReady, pausedThread, storageStatePath, test, threadState } from "./fixtures";

/*
 * A thread whose graph version is no longer deployed: answering it is refused with the reason in words, the thread
 * says it needs a supervisor, and the supervisor continues it on the current version from the page.
 */
async function retireVersion(threadId: string): Promise<void> {
  const client = new pg.Client({
    connectionString: readFileSync(join(authDir(), "database-url.txt"), "utf8"),
  });
  await client.connect();
  try {
    await client.query("UPDATE threads SET agent_version = '0' WHERE id = $1", [threadId]);
  } finally {
    await client.end();
  }
}

test("a thread of a retired version needs a supervisor, who continues it on the current version", async ({
  page,
  browser,
}) => {
  const threadId = await pausedThread(page, "My headphones from ORD-1002 are broken, please refund them.");
  await retireVersion(threadId);

  // An operator tries to approve: refused, and the page says why.
  const operator = await browser.newContext({ storageState: storageStatePath("operator") });
  const theirs = await operator.newPage();
  await openReady(theirs, `/threads/${threadId}`, "thread-page");
  await theirs.getByTestId("decision-refund_approval").getByTestId("approve").click();
  await expect(theirs.getByRole("alert").filter({ hasText: "version 0" })).toBeVisible();
  await expect.poll(async () => (await threadState(theirs, threadId)).status).toBe("needs_attention");
  await theirs.reload();
  await expect(theirs.getByTestId("attention-panel")).toContainText("version 0");
  await expect(theirs.getByTestId("attention-panel")).toContainText("Ask a supervisor");
  await operator.close();

  await openReady(page, `/threads/${threadId}`, "thread-page");
  await expect(page.getByTestId("status-badge")).toHaveText("Needs a supervisor");
  await page.screenshot({ path: test.info().outputPath("needs-attention.png"), fullPage: true });
  await page.getByTestId("fork-onto-current").click();
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-status", "interrupted", {
    timeout: 20_000,
  });
  await expect(page.getByTestId("attention-panel")).toHaveCount(0);
  // The supervisor started the branch's run, so four-eyes leaves its approval to someone else — said before a click.
  await expect(page.getByTestId("decision-refund_approval").getByTestId("approve")).toBeDisabled();
  await expect(page.getByTestId("decision-refusal")).toContainText("someone else must approve");
  const state = await threadState(page, threadId);
  expect(state.agentVersion).toBe("1");
  expect(state.status).toBe("interrupted");
});
