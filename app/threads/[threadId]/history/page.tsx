import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { z } from "zod";
import { HistoryExplorer } from "@/components/history/history-explorer";
import { HISTORY_PAGE_SIZE } from "@/components/history/paging";
import { answeringPage, requirePageUser } from "@/lib/auth/page";
import { pageSeesThread } from "@/lib/auth/teams";
import { getDatabase } from "@/lib/db/client";
import { findAgent, readableAgent } from "@/lib/runtime/agents/registry";
import { listEffectViews } from "@/lib/runtime/views/effects";
import { graphDrawing } from "@/lib/runtime/views/graph-drawing";
import { findHistoryThread, getThreadHistory } from "@/lib/runtime/views/history-view";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "History" };

/** A thread's checkpoint history as a branch tree, with diffs and time travel (fork from any checkpoint). */
async function HistoryPage({
  params,
  searchParams,
}: {
  params: Promise<{ threadId: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const [{ threadId }, search] = await Promise.all([params, searchParams]);
  const user = await requirePageUser(`/threads/${threadId}/history`);
  const { db, sql } = await getDatabase();
  const thread = await findHistoryThread({ db, threadId });
  // Another team's thread is as unknown as one that does not exist.
  if (!thread || !(await pageSeesThread(db, user, threadId))) notFound();
  // The graph of the thread's own version (a version this server no longer has is not drawn).
  const version = findAgent(thread.agentId, thread.agentVersion);
  const [history, effects, drawing] = await Promise.all([
    getThreadHistory({ db, sql }, { threadId, before: null, limit: HISTORY_PAGE_SIZE }),
    listEffectViews({ db, threadId }),
    version ? graphDrawing(version).catch(() => null) : null,
  ]);
  const wanted = typeof search.checkpoint === "string" ? search.checkpoint : null;
  const selection = history.checkpoints.some((c) => c.checkpointId === wanted) ? wanted : null;

  return (
    <div className="space-y-5">
      <nav aria-label="Breadcrumb" className="text-sm text-slate-600">
        <Link href="/" className="underline underline-offset-2">
          Inbox
        </Link>{" "}
        /{" "}
        <Link href={`/threads/${threadId}`} className="underline underline-offset-2">
          {thread.title}
        </Link>{" "}
        / History
      </nav>
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="text-2xl font-semibold">History</h1>
        {thread.orderRef && <span className="font-mono text-sm text-slate-700">{thread.orderRef}</span>}
        <Link
          href={`/threads/${threadId}`}
          className="ml-auto rounded-md bg-white px-3 py-2 text-sm font-semibold text-slate-900 shadow-sm ring-1 ring-inset ring-slate-300 hover:bg-slate-50"
        >
          Open the thread
        </Link>
      </div>
      <HistoryExplorer
        threadId={threadId}
        initial={history}
        initialSelection={selection}
        nodes={readableAgent(thread).fork.asNodes}
        channels={readableAgent(thread).fork.editableFields}
        forkSchema={z.toJSONSchema(readableAgent(thread).fork.editable, {
          io: "input",
          unrepresentable: "any",
        })}
        effects={effects}
        drawing={drawing}
      />
    </div>
  );
}

export default answeringPage(HistoryPage);
