import { type BulkVerb, questionKind } from "@/lib/contract/questions/kinds";

/*
 * What "approve" and "reject" mean for each interrupt action that can be decided in bulk (isomorphic: the inbox
 * offers bulk decisions only for these, the server builds the answers). Read from the question kinds
 * (`lib/contract/questions/kinds.ts`): actions that need a choice or a text of their own are decided one by one.
 */

/** Whether items of this action can be decided in bulk (lib/contract/questions/bulk.ts: the inbox asks too). */
export { isBulkAction } from "@/lib/contract/questions/bulk";
export type { BulkVerb };

/** The answer a bulk `verb` gives an interrupt of `action` (validated by the contract where it is decided). */
export function bulkAnswer(action: string, verb: BulkVerb, note: string | undefined): unknown {
  const make = questionKind(action)?.bulk;
  if (!make) throw new Error(`${action} cannot be decided in bulk`);
  return make(verb, note);
}
