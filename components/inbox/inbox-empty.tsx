import Link from "next/link";

/** What an empty inbox says: what lands here, and how to make something land here. */
export function InboxEmpty({
  kind,
  clearHref,
}: {
  kind: "decisions" | "filtered" | "threads";
  clearHref: string;
}) {
  if (kind === "filtered") {
    return (
      <div
        data-testid="inbox-empty"
        className="rounded-lg border border-dashed border-slate-300 bg-white p-8"
      >
        <h2 className="text-base font-semibold">No pending decision matches these filters</h2>
        <p className="mt-1 text-sm text-slate-700">
          Widen the amount range or the age, or{" "}
          <Link href={clearHref} className="font-medium text-indigo-800 underline underline-offset-2">
            clear the filters
          </Link>
          .
        </p>
      </div>
    );
  }
  return (
    <div data-testid="inbox-empty" className="rounded-lg border border-dashed border-slate-300 bg-white p-8">
      <h2 className="text-base font-semibold">
        {kind === "threads" ? "No threads yet" : "Nothing is waiting for you"}
      </h2>
      <p className="mt-2 max-w-2xl text-sm text-slate-700">
        When the refund agent needs a person — to approve a refund above the automatic limit, to choose how
        the money goes back, to supply a missing order number or to confirm the reply to the customer — it
        pauses, and the question appears here, oldest first. This list refreshes by itself.
      </p>
      <p className="mt-3 text-sm text-slate-700">
        To see one now,{" "}
        <Link href="/threads/new" className="font-medium text-indigo-800 underline underline-offset-2">
          create a ticket
        </Link>{" "}
        for order <span className="font-mono">ORD-1002</span> (€249.00: above the limit, so it needs an
        approval).
      </p>
    </div>
  );
}
