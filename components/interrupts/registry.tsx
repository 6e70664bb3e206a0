import type { ComponentType } from "react";
import type { InterruptAction, InterruptPayload } from "@/lib/contract/questions";
import { ConfirmEmailForm } from "./confirm-email-form";
import { GoodwillVoucherForm } from "./goodwill-voucher-form";
import { InputTextForm } from "./input-text-form";
import { RefundApprovalForm } from "./refund-approval-form";
import { ReviewChangeForm } from "./review-change-form";
import { RunBudgetForm } from "./run-budget-form";
import { SelectOptionForm } from "./select-option-form";
import { ToolReviewForm } from "./tool-review-form";
import type { DecisionFormProps } from "./types";
import { WaitTimerForm } from "./wait-timer-form";

/**
 * One form per interrupt action. The mapped type makes this exhaustive: an action added to the contract without a
 * form here fails to compile, and each form receives exactly its action's payload and answer types.
 */
export type DecisionFormRegistry = { [A in InterruptAction]: ComponentType<DecisionFormProps<A>> };

export const decisionForms: DecisionFormRegistry = {
  refund_approval: RefundApprovalForm,
  select_option: SelectOptionForm,
  input_text: InputTextForm,
  confirm_email: ConfirmEmailForm,
  review_change: ReviewChangeForm,
  goodwill_voucher: GoodwillVoucherForm,
  tool_review: ToolReviewForm,
  run_budget: RunBudgetForm,
  wait_timer: WaitTimerForm,
};

/** The registered form for an action. */
export function formFor<A extends InterruptAction>(action: A): ComponentType<DecisionFormProps<A>> {
  return decisionForms[action];
}

/** Render a typed payload with its action's form. */
export function DecisionForm({
  payload,
  ...props
}: Omit<DecisionFormProps<InterruptAction>, "payload"> & { payload: InterruptPayload }) {
  const Form = formFor(payload.action);
  return <Form payload={payload} {...props} />;
}
