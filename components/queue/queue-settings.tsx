"use client";

import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import { actionLabel } from "@/components/ui/action-label";
import { Button } from "@/components/ui/button";
import { errorMessage, postJson } from "@/components/ui/fetch-json";
import { INTERRUPT_ACTIONS } from "@/lib/contract/questions/contract";
import { NOTIFY_EVENTS, type SlaPolicyView, type TargetView } from "@/lib/contract/views/settings";

const input = "rounded-md border border-slate-300 bg-white px-2 py-1 text-sm";

function hours(seconds: number): string {
  return seconds % 3600 === 0
    ? `${seconds / 3600} h`
    : seconds % 60 === 0
      ? `${seconds / 60} min`
      : `${seconds} s`;
}

/**
 * The operator queue's settings on the admin page: deadlines per action and amount (with an optional expiry answer
 * applied by system:expiry), and where notifications go (HMAC-signed webhooks, email to a role).
 */
export function QueueSettings({ policies, targets }: { policies: SlaPolicyView[]; targets: TargetView[] }) {
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const send = async (url: string, body: unknown) => {
    setError(null);
    try {
      const result = await postJson<{ secret?: string | null }>(url, body);
      if (result.secret) setSecret(result.secret);
      router.refresh();
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const addPolicy = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const note = String(f.get("expiryNote") ?? "").trim();
    void send("/api/admin/sla", {
      action: f.get("action"),
      minAmountCents: Math.round(Number(f.get("minEuros") || 0) * 100),
      dueSeconds: Math.round(Number(f.get("dueHours")) * 3600),
      expiryAnswer:
        note && f.get("action") === "refund_approval"
          ? { status: "resolved", payload: { decision: "reject", note } }
          : null,
    });
  };
  const addTarget = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    void send("/api/admin/notifications", {
      op: "add",
      kind: f.get("kind"),
      target: f.get("target"),
      events: NOTIFY_EVENTS.filter((ev) => f.get(ev) === "on"),
      minAmountCents: f.get("minEuros") ? Math.round(Number(f.get("minEuros")) * 100) : null,
    });
  };

  return (
    <section
      aria-labelledby="queue-settings"
      className="space-y-4 rounded-lg border border-slate-200 bg-white p-4"
      data-testid="queue-settings"
    >
      <h2 id="queue-settings" className="text-lg font-semibold">
        Queue: deadlines and notifications
      </h2>
      {error && (
        <p role="alert" className="text-sm text-red-700">
          {error}
        </p>
      )}
      <div className="space-y-2">
        <h3 className="font-medium">Deadlines</h3>
        <ul className="text-sm" data-testid="sla-policies">
          {policies.map((p) => (
            <li key={p.id} className="flex flex-wrap items-center gap-2">
              <span>
                {p.action === "*" ? "Any decision" : p.action}
                {p.minAmountCents > 0 ? ` from €${(p.minAmountCents / 100).toFixed(2)}` : ""}: due in{" "}
                {hours(p.dueSeconds)}
                {p.expiryAnswer ? ", then answered by system:expiry" : ""}
              </span>
              {p.id !== "default" && (
                <button
                  type="button"
                  className="text-xs text-red-700 underline"
                  onClick={() =>
                    void send("/api/admin/sla", {
                      action: p.action,
                      minAmountCents: p.minAmountCents,
                      dueSeconds: p.dueSeconds,
                      remove: true,
                    })
                  }
                >
                  Remove
                </button>
              )}
            </li>
          ))}
        </ul>
        <form
          onSubmit={addPolicy}
          className="flex flex-wrap items-end gap-2 text-sm"
          aria-label="Add a deadline"
        >
          <label className="flex flex-col">
            Action
            <select name="action" className={input} defaultValue="refund_approval">
              {["*", ...INTERRUPT_ACTIONS.filter((a) => a !== "wait_timer")].map((a) => (
                <option key={a} value={a}>
                  {a === "*" ? "Any" : actionLabel(a)}
                </option>
              ))}
            </select>
          </label>
          <label className="flex flex-col">
            From amount (€)
            <input name="minEuros" type="number" min="0" step="0.01" className={`${input} w-28`} />
          </label>
          <label className="flex flex-col">
            Due in (hours)
            <input
              name="dueHours"
              type="number"
              min="0.01"
              step="0.01"
              required
              className={`${input} w-24`}
            />
          </label>
          <label className="flex flex-col">
            Reject with this note when overdue (refunds)
            <input name="expiryNote" maxLength={2000} className={`${input} w-64`} />
          </label>
          <Button type="submit">Save deadline</Button>
        </form>
      </div>
      <div className="space-y-2">
        <h3 className="font-medium">Notifications</h3>
        <ul className="text-sm" data-testid="notification-targets">
          {targets.map((t) => (
            <li key={t.id} className="flex flex-wrap items-center gap-2">
              <span>
                {t.kind === "webhook"
                  ? `Webhook ${t.target}${t.signed ? " (signed)" : ""}`
                  : `Email to every ${t.target}`}
                : {t.events.join(", ")}
                {t.minAmountCents !== null ? ` (new items from €${(t.minAmountCents / 100).toFixed(2)})` : ""}
              </span>
              <button
                type="button"
                className="text-xs text-red-700 underline"
                onClick={() => void send("/api/admin/notifications", { op: "remove", id: t.id })}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
        {secret && (
          <p className="rounded bg-amber-50 p-2 text-sm" data-testid="webhook-secret">
            Signing secret (shown once; the receiver checks{" "}
            <code>X-Hitl-Signature: sha256=HMAC(secret, body)</code>):{" "}
            <code className="break-all">{secret}</code>
          </p>
        )}
        <form
          onSubmit={addTarget}
          className="flex flex-wrap items-end gap-2 text-sm"
          aria-label="Add a notification target"
        >
          <label className="flex flex-col">
            Kind
            <select name="kind" className={input}>
              <option value="webhook">Webhook</option>
              <option value="email">Email to a role</option>
            </select>
          </label>
          <label className="flex flex-col">
            URL or role
            <input name="target" required maxLength={2000} className={`${input} w-64`} />
          </label>
          <fieldset className="flex flex-wrap gap-2">
            <legend className="sr-only">Events</legend>
            {NOTIFY_EVENTS.map((ev) => (
              <label key={ev} className="flex items-center gap-1">
                <input type="checkbox" name={ev} defaultChecked={ev !== "new_item"} /> {ev.replace("_", " ")}
              </label>
            ))}
          </fieldset>
          <label className="flex flex-col">
            New items from (€)
            <input name="minEuros" type="number" min="0" step="0.01" className={`${input} w-28`} />
          </label>
          <Button type="submit">Add target</Button>
        </form>
      </div>
    </section>
  );
}
