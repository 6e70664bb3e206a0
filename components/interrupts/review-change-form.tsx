"use client";

import { ApproveRejectForm } from "./approve-reject-form";
import type { DecisionFormProps } from "./types";
import { useDecisionForm } from "./use-decision-form";

const FIELD_LABELS = { address: "Postal address", email: "Email address", payout: "Payout account" } as const;
const REVIEW_LABELS = { fraud: "Fraud check", data: "Data check" } as const;

/** One review of an account change: what changes, what to check, approve or reject (a note is required to reject). */
export function ReviewChangeForm(props: DecisionFormProps<"review_change">) {
  const form = useDecisionForm(props, { rejectReason: "Say why the change is rejected." });
  const { payload } = props;
  const { change, customer } = payload;
  return (
    <div className="space-y-4">
      <dl className="grid grid-cols-[max-content_1fr] gap-x-4 gap-y-1 text-sm">
        <dt className="font-medium text-slate-700">Review</dt>
        <dd data-testid="review-kind">
          {REVIEW_LABELS[payload.review]} (needs a {payload.requiredRole})
        </dd>
        <dt className="font-medium text-slate-700">Customer</dt>
        <dd>
          <bdi>{customer.name}</bdi> · <bdi>{customer.email || "no email on file"}</bdi>
        </dd>
        <dt className="font-medium text-slate-700">{FIELD_LABELS[change.field]}</dt>
        <dd>
          <span className="text-slate-600 line-through">
            <bdi>{change.from ?? "not on file"}</bdi>
          </span>{" "}
          → <bdi className="font-medium">{change.to}</bdi>
        </dd>
      </dl>
      <ul className="list-disc space-y-1 pl-5 text-sm text-slate-800">
        {payload.checks.map((check) => (
          <li key={check}>{check}</li>
        ))}
      </ul>
      <ApproveRejectForm
        form={form}
        approveLabel="Approve the change"
        approve={{ decision: "approve", ...form.note.withNote }}
        reject={(text) => ({ decision: "reject", note: text })}
      />
    </div>
  );
}
