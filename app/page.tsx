import type { Metadata } from "next";
import { inboxListArgs, inboxQuery } from "@/app/api/threads/schema";
import {
  DEFAULT_PAGE_SIZE,
  type InboxParams,
  inboxSearch,
  pickInboxParams,
} from "@/components/inbox/inbox-query";
import { InboxView } from "@/components/inbox/inbox-view";
import { answeringPage, requirePageUser } from "@/lib/auth/page";
import { principalOfUser, teamScope } from "@/lib/auth/teams";
import { issuesMessage } from "@/lib/contract/wire";
import { getDatabase } from "@/lib/db/client";
import { readInbox } from "@/lib/queue/inbox-view";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Inbox" };

/**
 * The start page: the operator's inbox. The URL carries the view and filters in the API's own terms; the first page
 * is read here and handed to the live client view, which keeps polling.
 */
async function InboxPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const user = await requirePageUser("/");
  let params: InboxParams = { limit: DEFAULT_PAGE_SIZE, ...pickInboxParams(await searchParams) };
  let parsed = inboxQuery.safeParse(params);
  let problem: string | undefined;
  if (!parsed.success) {
    problem = issuesMessage(parsed.error);
    params = { limit: DEFAULT_PAGE_SIZE };
    parsed = inboxQuery.safeParse(params);
  }
  if (!parsed.success) throw new Error("the default inbox query does not parse");
  const query = parsed.data;
  const { db } = await getDatabase();
  // The first page is always rendered without a cursor; the client pages on from there.
  const principal = principalOfUser(user);
  const { hiddenAgents } = await teamScope(db, principal);
  const page = await readInbox({
    db,
    ...inboxListArgs(query, user.id),
    cursor: undefined,
    hiddenAgents,
    principal,
  });

  return (
    <InboxView
      key={inboxSearch(params)}
      params={params}
      initial={page}
      renderedAt={Date.now()}
      problem={problem}
    />
  );
}

export default answeringPage(InboxPage);
