import { INTERRUPT_ACTIONS } from "@/lib/contract/questions/contract";
import { QUESTION_KINDS } from "@/lib/contract/questions/kinds";

/** What the operator calls each interrupt action (from the question kinds); "unknown" is a payload outside the contract. */
export const ACTION_LABELS: Record<string, string> = {
  ...Object.fromEntries(INTERRUPT_ACTIONS.map((a) => [a, QUESTION_KINDS[a].label])),
  unknown: "Other",
};

/** The label of an action, or the action itself when it is not one we know. */
export function actionLabel(action: string): string {
  return Object.hasOwn(ACTION_LABELS, action) ? (ACTION_LABELS[action] as string) : action;
}
