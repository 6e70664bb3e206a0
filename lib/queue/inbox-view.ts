import "server-only";
import type { InboxFilter } from "@/lib/contract/inbox";
import type { Principal } from "@/lib/contract/roles";
import { listInbox, queueNeighbours } from "@/lib/db/queries/inbox";
import type { Queryable } from "@/lib/db/tx";
import { markDecidable } from "./inbox-marks";

/*
 * The inbox as an operator reads it (the start page, `GET /api/threads`, the thread page's next / previous): the
 * pages of the queue within the reader's teams, each pending item they may not decide marked with why.
 */

export type { InboxFilter };

type Listing = Omit<Parameters<typeof listInbox>[0], "db" | "hiddenAgents">;

/** A page of the inbox (`listing`: status, filter, cursor, limit) as `principal` sees it, refusals marked. */
export async function readInbox({
  db,
  principal,
  hiddenAgents,
  ...listing
}: Listing & {
  db: Queryable;
  principal: Principal;
  /** Agents whose threads the reader may not see (teams): left out. */
  hiddenAgents: readonly string[];
}) {
  const page = await listInbox({ db, ...listing, hiddenAgents });
  return markDecidable({ db, page, principal });
}

/**
 * The threads before and after this one in the queue the operator came from (`filter`: that inbox view's filters;
 * none, the whole queue): where `n` / `p` on the thread page go.
 */
export function findQueueNeighbours({
  db,
  threadId,
  filter,
  hiddenAgents,
}: {
  db: Queryable;
  threadId: string;
  filter: InboxFilter;
  /** Agents whose threads the reader may not see (teams): never a neighbour. */
  hiddenAgents: readonly string[];
}) {
  return queueNeighbours({ db, threadId, filter, hiddenAgents });
}
