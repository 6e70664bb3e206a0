import type { Metadata } from "next";
import Link from "next/link";
import { StatusBadge } from "@/components/ui/status-badge";
import { answeringPage, requirePageUser } from "@/lib/auth/page";
import { principalOfUser, teamScope } from "@/lib/auth/teams";
import { getDatabase } from "@/lib/db/client";
import { findThreads } from "@/lib/runtime/views/search-view";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Search" };

const MATCHED: Record<string, string> = {
  order: "order number",
  email: "customer email",
  thread: "thread id",
  name: "customer name",
  text: "ticket text",
};

/** Search results: threads by order number, customer email or name, thread id or the words of the ticket. */
async function SearchPage({ searchParams }: { searchParams: Promise<{ q?: string | string[] }> }) {
  const raw = (await searchParams).q;
  const q = (Array.isArray(raw) ? raw[0] : raw)?.trim().slice(0, 200) ?? "";
  const user = await requirePageUser(`/search?q=${encodeURIComponent(q)}`);
  const { db } = await getDatabase();
  const { hiddenAgents } = await teamScope(db, principalOfUser(user));
  const hits = q ? await findThreads({ db, q, hiddenAgents }) : [];
  return (
    <div className="space-y-5" data-testid="search-page">
      <h1 className="text-2xl font-semibold">Search</h1>
      <p className="text-sm text-slate-700" data-testid="search-summary">
        {q
          ? `${hits.length} thread(s) for “${q}”`
          : "Search by order number, customer email or name, thread id or words of the ticket."}
      </p>
      {hits.length > 0 && (
        <ul
          className="divide-y divide-slate-200 rounded-lg border border-slate-200 bg-white"
          data-testid="search-results"
        >
          {hits.map((hit) => (
            <li
              key={hit.threadId}
              className="flex flex-wrap items-center gap-3 p-3"
              data-testid="search-hit"
              data-thread-id={hit.threadId}
            >
              <Link
                href={`/threads/${hit.threadId}`}
                className="font-medium text-indigo-800 underline-offset-2 hover:underline"
              >
                {hit.title}
              </Link>
              <StatusBadge status={hit.status} />
              <span className="font-mono text-xs text-slate-700">{hit.orderRef ?? "—"}</span>
              <span className="text-sm text-slate-700">{hit.customerName ?? ""}</span>
              <span className="text-xs text-slate-600">matched by {MATCHED[hit.matched] ?? hit.matched}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export default answeringPage(SearchPage);
