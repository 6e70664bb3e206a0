import { showControls } from "@/lib/contract/bidi";
import { questionKind } from "@/lib/contract/questions/kinds";

const quote = (v: unknown) => `“${showControls(String(v ?? ""))}”`;

/** An answer from the ledger as one line for people ("Approved €200.00 (a smaller amount)"), from its question kind. */
export function summarizeAnswer(action: string, answer: unknown, currency = "EUR"): string {
  if (answer === null || answer === undefined) return "—";
  const a = (typeof answer === "object" ? answer : {}) as Record<string, unknown>;
  return questionKind(action)?.summarize(a, currency, quote) ?? "Answered (see the history for the details)";
}
