import type { InterruptAction } from "@/lib/interrupts/contract";

/** What the operator calls each interrupt action; "unknown" is a payload outside the contract. */
export const ACTION_LABELS: Record<InterruptAction | "unknown", string> = {
  refund_approval: "Refund approval",
  select_option: "Choose an option",
  input_text: "Missing information",
  confirm_email: "Confirm email",
  review_change: "Account change review",
  goodwill_voucher: "Goodwill voucher",
  unknown: "Other",
};

/** The label of an action, or the action itself when it is not one we know. */
export function actionLabel(action: string): string {
  return ACTION_LABELS[action as keyof typeof ACTION_LABELS] ?? action;
}
