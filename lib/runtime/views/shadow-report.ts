import "server-only";
import type { ShadowReportView } from "@/lib/contract/views/shadow";
import { lastShadowReport } from "@/lib/db/queries/shadow-reports";
import type { Queryable } from "@/lib/db/tx";
import { type ThreadVerdict, VERDICT_WORDS, VERDICTS } from "../runs/shadow-verdict";

/** The last report of `npm run deploy:shadow`, in words, or null when none was made. */
export async function readLastShadowReport({ db }: { db: Queryable }): Promise<ShadowReportView | null> {
  const row = await lastShadowReport({ db });
  if (!row) return null;
  return {
    createdAt: row.createdAt.toISOString(),
    candidate: row.candidate,
    baseline: row.baseline,
    exitCode: row.exitCode,
    summary: VERDICTS.filter((v) => (row.summary[v] ?? 0) > 0).map((v) => ({
      verdict: VERDICT_WORDS[v],
      threads: row.summary[v] ?? 0,
    })),
    threads: (row.threads as ThreadVerdict[]).map((t) => ({
      threadId: t.threadId,
      agent: t.agent,
      versions: t.versions,
      verdict: VERDICT_WORDS[t.verdict] ?? t.verdict,
      details: t.details,
    })),
  };
}
