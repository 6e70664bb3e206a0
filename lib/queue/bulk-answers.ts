/*
 * What "approve" and "reject" mean for each interrupt action that can be decided in bulk (isomorphic: the inbox
 * offers bulk decisions only for these, the server builds the answers). Actions that need a choice or a text of
 * their own (select an option, type an answer) are decided one by one.
 */

export type BulkVerb = "approve" | "reject";

const ANSWERS: Record<string, (verb: BulkVerb, note: string | undefined) => unknown> = {
  refund_approval: (verb, note) =>
    verb === "approve" ? { decision: "approve", ...(note ? { note } : {}) } : { decision: "reject", note },
  review_change: (verb, note) =>
    verb === "approve" ? { decision: "approve", ...(note ? { note } : {}) } : { decision: "reject", note },
  goodwill_voucher: (verb, note) =>
    verb === "approve" ? { decision: "grant" } : { decision: "decline", note },
  confirm_email: (verb, note) =>
    verb === "approve" ? { choice: "send" } : { choice: "dont_send", ...(note ? { note } : {}) },
};

/** Whether items of this action can be approved / rejected in bulk. */
export function isBulkAction(action: string): boolean {
  return Object.hasOwn(ANSWERS, action);
}

/** The answer a bulk `verb` gives an interrupt of `action` (validated by the contract where it is decided). */
export function bulkAnswer(action: string, verb: BulkVerb, note: string | undefined): unknown {
  const make = ANSWERS[action];
  if (!make) throw new Error(`${action} cannot be decided in bulk`);
  return make(verb, note);
}
