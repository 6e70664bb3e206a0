import { operatorMessage } from "@/lib/contract/operator-messages";

/**
 * An error as the operator reads it: what happened, what to do, and — small, for support — the code as a details line
 * (`lib/contract/operator-messages.ts`). Inline content: it sits in whatever banner or alert holds it.
 */
export function OperatorError({
  error,
  lead,
}: {
  error: { code: string; message?: string | null };
  lead?: string;
}) {
  const m = operatorMessage(error);
  return (
    <span className="block space-y-1" data-testid="operator-error" data-code={error.code}>
      <span className="block">
        {lead ? `${lead} ` : ""}
        {m.text}
        {m.todo ? ` ${m.todo}` : ""}
      </span>
      <span className="block text-xs opacity-80" data-testid="error-details">
        Details for support: {m.details}
      </span>
    </span>
  );
}
