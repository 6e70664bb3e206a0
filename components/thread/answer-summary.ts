import { humanize } from "@/components/interrupts/humanize";
import { showControls } from "@/lib/bidi";
import { formatMoney } from "@/lib/wire";

type Answer = Record<string, unknown>;

const quote = (v: unknown) => `“${showControls(String(v ?? ""))}”`;

/** An answer from the ledger as one line for people ("Approved €200.00 (a smaller amount)"). */
export function summarizeAnswer(action: string, answer: unknown, currency = "EUR"): string {
  if (answer === null || answer === undefined) return "—";
  const a = (typeof answer === "object" ? answer : {}) as Answer;
  switch (action) {
    case "refund_approval":
    case "review_change":
      if (a.decision === "approve") return a.note ? `Approved (note: ${quote(a.note)})` : "Approved";
      if (a.decision === "reject") return `Rejected: ${quote(a.note)}`;
      if (a.decision === "approve_partial" && typeof a.amountCents === "number") {
        return `Approved ${formatMoney(a.amountCents, currency)} (a smaller amount)`;
      }
      break;
    case "goodwill_voucher":
      return a.decision === "grant" ? "Granted the voucher" : `Declined: ${quote(a.note)}`;
    case "select_option":
      if (typeof a.optionId === "string") return `Chose ${humanize(a.optionId)}`;
      break;
    case "input_text":
      if (typeof a.text === "string") return `Answered ${quote(a.text)}`;
      break;
    case "confirm_email":
      if (a.choice === "send") return "Sent the drafted email";
      if (a.choice === "send_edited") return `Sent an edited email (${quote(a.subject)})`;
      if (a.choice === "dont_send") return "Did not send the email";
      break;
  }
  return "Answered (see the history for the details)";
}
