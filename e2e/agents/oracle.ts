import { declaredToolRules, type ToolRule } from "@hitl/agent-kit";
import { isBulkAction } from "@/lib/queue/bulk-answers";
import type { AgentDefinition } from "@/lib/runtime/agents/registry";
import { type Kind, PEOPLE, type Person, RANK, type Rng, type Role } from "../support/decide";

/*
 * What the generated policy suite expects, derived from an agent's declaration (its per-tool rules, `systemMayAct`,
 * the kind's bulk answers) — written out here in plain code, not read from the server or by calling the agent's
 * policy — and the answers it tries: for a reviewed tool call every decision its request allows, an edit of an
 * argument the rule lets a reviewer change and one of an argument it does not, in the request's own format.
 */

type Outcome = { ok: true } | { ok: false; status: number; code: string };
export const OK: Outcome = { ok: true };
const refuse = (status: number, code: string): Outcome => ({ ok: false, status, code });

export type { Outcome };

interface Request {
  name: string;
  args: Record<string, unknown>;
  allowed: string[];
  argsSchema?: Record<string, unknown>;
}
/** One reviewed call's decision in an answer, as the oracle reads it. */
type Decided =
  | { type: "approve" }
  | { type: "edit"; args: Record<string, unknown> }
  | { type: "reject" | "respond" | "ignore"; message: string };

/** A generated answer: its kind (for labels and bulk), the decisions per call, and the wire answer. */
export interface GeneratedAnswer {
  kind: string;
  decided: Decided[];
  wire: unknown;
  /** What a bulk request says for it, when bulk can say it. */
  verb?: "approve" | "reject";
}

/** A value other than `value` that the JSON Schema `schema` still accepts (null when none is found). */
export function otherValue(schema: Record<string, unknown> | undefined, value: unknown, rng: Rng): unknown {
  const s = schema ?? {};
  if (Array.isArray(s.enum)) return s.enum.find((v) => v !== value) ?? null;
  if (typeof value === "number" || s.type === "integer" || s.type === "number") {
    const n = Number(value ?? 0);
    const min = typeof s.minimum === "number" ? s.minimum : Number.MIN_SAFE_INTEGER;
    const max = typeof s.maximum === "number" ? s.maximum : Number.MAX_SAFE_INTEGER;
    const step = rng.nextInt(1, 50);
    for (const candidate of [n - step, n + step, n - 1, n + 1])
      if (candidate >= min && candidate <= max) return candidate;
    return null;
  }
  if (typeof value === "boolean") return !value;
  if (typeof value === "string") {
    const pattern = typeof s.pattern === "string" ? new RegExp(s.pattern) : null;
    const maxLength = typeof s.maxLength === "number" ? s.maxLength : Number.POSITIVE_INFINITY;
    const candidates = [
      // A digit changed keeps most identifiers valid (INV-2001 → INV-2002).
      value.replace(/\d(?=\D*$)/, (d) => String((Number(d) + rng.nextInt(1, 8)) % 10)),
      `${value} (edited)`,
      value.slice(0, -1),
      "Edited by a reviewer.",
    ];
    return (
      candidates.find(
        (c) => c !== value && c.length > 0 && c.length <= maxLength && (!pattern || pattern.test(c)),
      ) ?? null
    );
  }
  return null;
}

function encode(format: string, requests: Request[], decided: Decided[]): unknown {
  if (format === "langchain") {
    return {
      decisions: decided.map((d, i) =>
        d.type === "edit"
          ? { type: "edit", editedAction: { name: requests[i]!.name, args: d.args } }
          : d.type === "approve"
            ? { type: "approve" }
            : { type: "reject", message: d.message },
      ),
    };
  }
  return decided.map((d, i) =>
    d.type === "edit"
      ? { type: "edit", args: { action: requests[i]!.name, args: d.args } }
      : d.type === "approve"
        ? { type: "accept", args: null }
        : d.type === "respond"
          ? { type: "response", args: d.message }
          : { type: "ignore", args: d.message },
  );
}

/** The answers the suite tries on a tool review (only what every call's request allows). */
export function toolReviewAnswers(
  agent: AgentDefinition,
  payload: Record<string, unknown>,
  rng: Rng,
): GeneratedAnswer[] {
  const rules = declaredToolRules(agent.policy) ?? {};
  const format = String(payload.format);
  const requests = payload.requests as Request[];
  const all = (type: string) => requests.every((r) => r.allowed.includes(type));
  const out: GeneratedAnswer[] = [];
  const add = (kind: string, decided: Decided[], verb?: "approve" | "reject") =>
    out.push({ kind, decided, wire: encode(format, requests, decided), ...(verb ? { verb } : {}) });
  if (all("approve"))
    add(
      "approve",
      requests.map(() => ({ type: "approve" })),
      "approve",
    );
  if (requests[0]?.allowed.includes("edit")) {
    const first = requests[0];
    const editable = new Set<string>((rules[first.name] as ToolRule | undefined)?.editable ?? []);
    const properties = (first.argsSchema?.properties ?? {}) as Record<string, Record<string, unknown>>;
    for (const [kind, pick] of [
      ["edit_allowed_argument", (name: string) => editable.has(name)],
      ["edit_fixed_argument", (name: string) => !editable.has(name)],
    ] as const) {
      for (const name of Object.keys(first.args).filter(pick)) {
        const value = otherValue(properties[name], first.args[name], rng);
        if (value === null) continue;
        add(kind, [
          { type: "edit", args: { ...first.args, [name]: value } },
          ...requests.slice(1).map((): Decided => ({ type: "approve" })),
        ]);
        break;
      }
    }
  }
  if (all("reject"))
    add(
      "reject",
      requests.map(() => ({ type: "reject", message: "Not this time." })),
      "reject",
    );
  if (all("respond"))
    add(
      "respond",
      requests.map(() => ({ type: "respond", message: "Ask them for the receipt first." })),
    );
  if (all("ignore"))
    add(
      "ignore",
      requests.map(() => ({ type: "ignore", message: "Handled by phone." })),
    );
  // A batch answered in part: LangChain runs none of it once one call is refused.
  if (requests.length > 1 && all("approve") && all("reject") && format === "langchain") {
    add("approve_some_reject_one", [
      ...requests.slice(0, -1).map((): Decided => ({ type: "approve" })),
      { type: "reject", message: "Not this one." },
    ]);
  }
  return out;
}

/** The calls an answer lets run: none when LangChain sends a batch with a refusal back to the model. */
function running(format: string, requests: Request[], decided: Decided[]) {
  if (format === "langchain" && decided.some((d) => d.type === "reject")) return [];
  return requests.flatMap((request, i) => {
    const d = decided[i];
    if (d?.type === "approve") return [{ request, args: request.args, edited: false }];
    if (d?.type === "edit") return [{ request, args: d.args, edited: true }];
    return [];
  });
}

/** Whether an answer acts on the world (lets any reviewed call run). */
export function acts(payload: Record<string, unknown>, answer: GeneratedAnswer): boolean {
  return running(String(payload.format), payload.requests as Request[], answer.decided).length > 0;
}

/** Who supplied input that led to a question (four-eyes bars them): by the walk's story. */
export interface Story {
  involved: Set<Person>;
}

/** The outcome the declaration gives `kind` answering `answer` to a tool review. */
export function expectedToolReview(
  agent: AgentDefinition,
  payload: Record<string, unknown>,
  story: Story,
  kind: Kind,
  answer: GeneratedAnswer,
): Outcome {
  if (kind === "viewer") return refuse(403, "forbidden:role");
  const calls = running(String(payload.format), payload.requests as Request[], answer.decided);
  if (kind === "system_expiry")
    return calls.length > 0 && !agent.systemMayAct?.includes("tool_review")
      ? refuse(422, "unprocessable:sla_acting_answer")
      : OK;
  if (kind === "bulk" && !isBulkAction("tool_review")) return refuse(422, "unprocessable:bulk_action");
  const who: Person = kind === "bulk" ? "filer" : kind;
  const role: Role = PEOPLE[who];
  const rules = declaredToolRules(agent.policy) ?? {};
  for (const call of calls) {
    const rule = rules[call.request.name] as ToolRule | undefined;
    if (!rule) return refuse(403, "forbidden:tool_without_rule");
    if (call.edited) {
      const editable = new Set<string>(rule.editable ?? []);
      const changed = Object.keys({ ...call.request.args, ...call.args }).filter(
        (name) => JSON.stringify(call.request.args[name]) !== JSON.stringify(call.args[name]),
      );
      if (changed.some((name) => !editable.has(name))) return refuse(403, "forbidden:edit_not_allowed");
    }
    if (rule.fourEyes && story.involved.has(who)) return refuse(403, "forbidden:four_eyes_own_thread");
    const needed = (
      typeof rule.role === "function" ? rule.role(call.args) : (rule.role ?? "operator")
    ) as Role;
    if (RANK[role] < RANK[needed]) return refuse(403, "forbidden:tool_role");
  }
  return OK;
}
