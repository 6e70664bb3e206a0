import Link from "next/link";
import type { ShadowReportView } from "@/lib/contract/views/shadow";

const heading = "text-lg font-semibold text-slate-900";

/**
 * The last deploy shadow: what a candidate build would do with the threads waiting for a person, beside the build
 * serving now (`npm run deploy:shadow`, run from the candidate). Read-only: the command writes the report.
 */
export function ShadowPanel({ report }: { report: ShadowReportView | null }) {
  return (
    <section
      aria-labelledby="shadow-heading"
      className="space-y-3 rounded border border-slate-300 bg-white p-4"
    >
      <h2 id="shadow-heading" className={heading}>
        Deploy shadow
      </h2>
      {!report ? (
        <p className="text-sm text-slate-700">
          No shadow run yet. Before switching to a new build, run the deploy shadow from it (the README&apos;s
          &ldquo;Shadow the deploy before switching&rdquo;): it continues the threads waiting for a person on
          both builds, writing nothing, and says what would differ.
        </p>
      ) : (
        <>
          <p className="text-sm text-slate-800">
            {new Date(report.createdAt).toUTCString()}:{" "}
            <strong>
              {report.exitCode === 0
                ? "nothing money or a customer sees would differ"
                : "money or what a customer sees would differ — do not switch"}
            </strong>
            . {report.threads.length} thread(s):{" "}
            {report.summary.map((s) => `${s.threads} ${s.verdict}`).join(", ") || "none"}.
          </p>
          <p className="text-xs text-slate-700">
            Candidate <code>{report.candidate}</code>, compared with <code>{report.baseline}</code>.
          </p>
          {report.threads.length > 0 && (
            <table className="w-full text-left text-sm">
              <thead>
                <tr className="text-slate-700">
                  <th scope="col" className="py-1 pr-3 font-medium">
                    Thread
                  </th>
                  <th scope="col" className="py-1 pr-3 font-medium">
                    Version
                  </th>
                  <th scope="col" className="py-1 pr-3 font-medium">
                    Verdict
                  </th>
                  <th scope="col" className="py-1 font-medium">
                    What differs
                  </th>
                </tr>
              </thead>
              <tbody>
                {report.threads.map((t) => (
                  <tr key={t.threadId} className="border-t border-slate-200 align-top">
                    <td className="py-1 pr-3">
                      <Link href={`/threads/${t.threadId}`} className="underline underline-offset-2">
                        {t.agent} {t.threadId.slice(0, 8)}
                      </Link>
                    </td>
                    <td className="py-1 pr-3">{t.versions}</td>
                    <td className="py-1 pr-3">{t.verdict}</td>
                    <td className="py-1" data-raw>
                      {/* The shadow's own findings (an error's code among them): data for the admin, as reported. */}
                      {t.details.join("; ") || "—"}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}
