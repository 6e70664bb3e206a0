import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { cache } from "react";
import { inboxListArgs, inboxQuery } from "@/app/api/threads/schema";
import {
  type InboxParams,
  pickInboxParams,
  QUEUE_PARAM_NAMES,
  queueSearch,
} from "@/components/inbox/inbox-query";
import type { StreamEvent } from "@/components/thread/apply-event";
import { ThreadConsole } from "@/components/thread/thread-console";
import { answeringPage, requirePageUser } from "@/lib/auth/page";
import { pageSeesThread, principalOfUser, teamScope } from "@/lib/auth/teams";
import { errorCodeOf } from "@/lib/contract/errors";
import { type AppDb, getDatabase } from "@/lib/db/client";
import { listClaimsOnThread } from "@/lib/queue/claims";
import { findQueueNeighbours, type InboxFilter } from "@/lib/queue/inbox-view";
import { mayDecide } from "@/lib/runtime/agents/may-decide";
import { getThreadView, readActiveRunEvents, type ThreadView } from "@/lib/runtime/views/thread-view";

export const dynamic = "force-dynamic";

type Params = {
  params: Promise<{ threadId: string }>;
  searchParams?: Promise<Record<string, string | string[] | undefined>>;
};

/**
 * The page's database handle and the thread view, once per request (metadata and page share them: the page's one
 * call of getDatabase); an unknown thread is a 404, and so is another team's (its title is not even in the metadata).
 */
const loadView = cache(async (threadId: string): Promise<{ db: AppDb; view: ThreadView }> => {
  const user = await requirePageUser(`/threads/${threadId}`);
  const { db } = await getDatabase();
  if (!(await pageSeesThread(db, user, threadId))) notFound();
  try {
    return { db, view: await getThreadView({ db, threadId }) };
  } catch (error) {
    if (errorCodeOf(error) === "not_found:thread") notFound();
    throw error;
  }
});

/**
 * While a run is active the page starts from the view plus the active run's logged events up to the view's `lastSeq`
 * (the checkpoint lags behind what was streamed), and the browser goes on with `events?after=lastSeq`.
 */
async function activeRunEvents(db: AppDb, view: ThreadView): Promise<StreamEvent[]> {
  if (!view.activeRunId) return [];
  return (await readActiveRunEvents({ db, view })).map((e) => e as unknown as StreamEvent);
}

async function metadataOf({ params }: Params): Promise<Metadata> {
  const { threadId } = await params;
  await requirePageUser(`/threads/${threadId}`);
  return { title: (await loadView(threadId)).view.title };
}

/**
 * The inbox view the thread was opened from (its filters in the URL, as the inbox writes them): next / previous walk
 * that view. Filters that do not parse are not a view: the whole queue, and the links carry none of them.
 */
async function queueView(
  searchParams: Params["searchParams"],
  userId: string,
): Promise<{ filter: InboxFilter; search: string }> {
  const picked = pickInboxParams((await searchParams) ?? {});
  const params: InboxParams = {};
  for (const name of QUEUE_PARAM_NAMES) if (picked[name] !== undefined) params[name] = picked[name];
  const parsed = inboxQuery.safeParse(params);
  if (!parsed.success) return { filter: {}, search: "" };
  return { filter: inboxListArgs(parsed.data, userId).filter, search: queueSearch(params) };
}

async function ThreadPage({ params, searchParams }: Params) {
  const { threadId } = await params;
  const user = await requirePageUser(`/threads/${threadId}`);
  const { db, view } = await loadView(threadId);
  const runEvents = await activeRunEvents(db, view);
  const verdicts = await mayDecide({
    db,
    threadId,
    principal: { kind: "user", id: user.id, label: user.email, role: user.role },
  });
  const claims = await listClaimsOnThread({ db, threadId });
  const { hiddenAgents } = await teamScope(db, principalOfUser(user));
  const inView = await queueView(searchParams, user.id);
  const queue = {
    ...(await findQueueNeighbours({ db, threadId, filter: inView.filter, hiddenAgents })),
    search: inView.search,
  };
  return (
    <ThreadConsole
      view={{ ...view, mayDecide: verdicts }}
      runEvents={runEvents}
      claims={claims}
      queue={queue}
    />
  );
}

export default answeringPage(ThreadPage);
export const generateMetadata = answeringPage(metadataOf);
