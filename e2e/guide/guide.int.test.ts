import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { chromium } from "@playwright/test";
import { agentFor, createTicket, postRun, runBody, runOnce } from "../api/client";
import { cleanUp, prepareDatabase, startTestServer } from "../api/setup";
import { authedFetch, authHeaders } from "../support/auth";
import type { TestServer } from "../support/server";
import { buildGuideTree, guideAgents } from "./tree";

/*
 * "Add your own agent", followed to the letter: a copy of the app with the fixture agents of e2e/guide/agents/ added
 * as the README says (tree.ts), built with its type check. The copy differs from this tree in the agents' folders and
 * the registry's lines for them, nothing else; and on its server each agent's question — an agent-inbox
 * HumanInterrupt, and one raised inside a subgraph — is shown in Chromium, survives a reload, is answered from its
 * card, and asked again after a fork from before it, answered otherwise over HTTP.
 */

const ROOT = process.cwd();
const FLOWS: Record<string, { tool: string; otherwise: unknown; approved: string; other: string }> = {
  inbox_reply: {
    tool: "send_reply",
    otherwise: [{ type: "response", args: "Mention the tracking number." }],
    approved: "Reviewed by a person (approved)",
    other: "Reviewed by a person (answered)",
  },
  nested_review: {
    tool: "close_ticket",
    otherwise: { decisions: [{ type: "reject", message: "Still waiting for the parcel." }] },
    approved: "A person closed the ticket.",
    other: "A person kept the ticket open.",
  },
};

let tree: ReturnType<typeof buildGuideTree> | undefined;
let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
let server: TestServer | undefined;

beforeAll(async () => {
  tree = buildGuideTree();
  prepared = await prepareDatabase("guide");
  server = await startTestServer({ databaseUrl: prepared.url, cwd: tree.dir, env: { NEXT_DIST_DIR: "" } });
}, 900_000);
afterAll(async () => {
  await cleanUp([server], prepared);
  if (!process.env.GUIDE_TREE_DIR) tree?.remove();
});

describe("the guide, followed: one folder and the registry's lines per agent", () => {
  it("touches no file outside the agents' folders but the registry, and only adds lines to it", () => {
    const dir = tree!.dir;
    const tracked = execFileSync("git", ["ls-files", "-co", "--exclude-standard", "-z"], {
      cwd: ROOT,
      encoding: "utf8",
    })
      .split("\0")
      .filter((f) => f && existsSync(join(ROOT, f)));
    const changed = tracked.filter(
      (f) => existsSync(join(dir, f)) && !readFileSync(join(dir, f)).equals(readFileSync(join(ROOT, f))),
    );
    expect(changed).toEqual(["lib/agents.ts"]);
    const folders = guideAgents().map((a) => `lib/agents/${a.folder}/`);
    const newFiles = listFiles(join(dir, "lib"))
      .map((f) => relative(dir, f))
      .filter((f) => !tracked.includes(f));
    expect(newFiles.length).toBeGreaterThan(0);
    expect(newFiles.filter((f) => !folders.some((folder) => f.startsWith(folder)))).toEqual([]);

    const before = readFileSync(join(ROOT, "lib/agents.ts"), "utf8").split("\n");
    const after = readFileSync(join(dir, "lib/agents.ts"), "utf8").split("\n");
    expect(after.filter((l) => !before.includes(l))).toHaveLength(2 * guideAgents().length);
    expect(before.filter((l) => !after.includes(l))).toEqual([]);
  });

  it.each(Object.keys(FLOWS))(
    "%s: shown and answered in Chromium, reloaded, forked and answered otherwise",
    async (agentId) => {
      const flow = FLOWS[agentId]!;
      const base = server!.url;
      const message = "Where is my parcel? It has been two weeks.";
      const threadId = await createTicket(base, message, undefined, agentId);
      const first = await runOnce(agentFor(base, threadId), { message });
      expect(first.interrupts.map((i) => i.reason)).toEqual(["tool_review"]);
      const interruptId = first.interrupts[0]!.id;

      const browser = await chromium.launch({
        executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      });
      try {
        const context = await browser.newContext({
          baseURL: base,
          extraHTTPHeaders: await authHeaders(base, "supervisor"),
        });
        const page = await context.newPage();
        await page.goto(`/threads/${threadId}`);
        const card = page.getByTestId("decision-tool_review");
        await card.getByTestId("tool-call-card").waitFor({ timeout: 20_000 });
        expect(await card.getByTestId("tool-call-card").textContent()).toContain(flow.tool);
        // A refresh finds the same question.
        await page.reload();
        await page
          .getByTestId("thread-page")
          .and(page.locator('[data-ready="true"]'))
          .waitFor({ timeout: 20_000 });
        expect(await card.getAttribute("data-interrupt-id")).toBe(interruptId);
        await card.getByTestId("submit-review").click();
        await page.getByTestId("status-badge").filter({ hasText: "Completed" }).waitFor({ timeout: 20_000 });
        await page.getByText(flow.approved).waitFor();
      } finally {
        await browser.close();
      }

      // Fork from the checkpoint that asked: the question is asked again, and answered otherwise over HTTP.
      const view = await (await authedFetch(`${base}/api/threads/${threadId}`)).json();
      const at = (view.decisions as { interruptId: string; checkpointId: string }[]).find(
        (d) => d.interruptId === interruptId,
      );
      expect(at?.checkpointId).toBeTruthy();
      const fork = await authedFetch(`${base}/api/threads/${threadId}/fork`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ checkpointId: at!.checkpointId }),
      });
      expect(fork.status).toBe(202);
      const asked = await until(async () => {
        const v = await (await authedFetch(`${base}/api/threads/${threadId}`)).json();
        return !v.activeRunId && v.pendingInterrupts.length === 1
          ? (v.pendingInterrupts[0] as { interruptId: string; action: string })
          : null;
      });
      expect(asked.action).toBe("tool_review");
      expect(asked.interruptId).not.toBe(interruptId);
      const answered = await postRun(
        base,
        threadId,
        runBody(threadId, [{ interruptId: asked.interruptId, status: "resolved", payload: flow.otherwise }]),
      );
      expect(answered.status).toBe(200);
      const done = await until(async () => {
        const v = await (await authedFetch(`${base}/api/threads/${threadId}`)).json();
        return v.status === "completed" ? v : null;
      });
      expect(JSON.stringify(done.messages)).toContain(flow.other);
      // Both decisions are in the ledger, each resolved once.
      expect((done.decisions as { status: string }[]).map((d) => d.status).sort()).toEqual([
        "resolved",
        "resolved",
      ]);
    },
  );
});

function listFiles(dir: string): string[] {
  return execFileSync("find", [dir, "-type", "f"], { encoding: "utf8" }).split("\n").filter(Boolean);
}

async function until<T>(probe: () => Promise<T | null>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const got = await probe();
    if (got !== null) return got;
    if (Date.now() > end) throw new Error("guide: timed out waiting");
    await new Promise((r) => setTimeout(r, 100));
  }
}
