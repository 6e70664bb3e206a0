import { z } from "zod";

/*
 * The standard interrupts of the ecosystem, read into one question kind, `tool_review`, so an agent that raises them
 * needs no code of ours to be shown, answered and resumed (isomorphic):
 *
 * - LangChain v1's `humanInTheLoopMiddleware` (package `langchain`, `createAgent`): the interrupt value is
 *   `{ actionRequests: [{ name, args, description }], reviewConfigs: [{ actionName, allowedDecisions, argsSchema? }] }`
 *   and the resume value is `{ decisions: [{ type: "approve" } | { type: "edit", editedAction: { name, args } } |
 *   { type: "reject", message? }] }`, one decision per request, in order.
 * - agent-inbox's `HumanInterrupt` (raw `interrupt()` graphs): `[{ action_request: { action, args }, config: {
 *   allow_accept, allow_edit, allow_respond, allow_ignore }, description }]`, resumed with `[{ type: "accept" |
 *   "edit" | "response" | "ignore", args }]`.
 *
 * The answer stored in the ledger and handed to the graph is the format's own resume value, so the agent gets exactly
 * what its library expects; `reviewDecisions` reads either back into one vocabulary for policy and summaries.
 */

/**
 * What a person may do with a reviewed tool call. `ignore` is agent-inbox's own: the call is not made and the agent
 * moves on (no refusal for it to read); the reviewer's note, if any, is kept with the answer and given to the graph.
 */
export const REVIEW_DECISIONS = ["approve", "edit", "reject", "respond", "ignore"] as const;
export type ReviewDecisionType = (typeof REVIEW_DECISIONS)[number];

const jsonObject = z.record(z.string(), z.unknown());

/** One tool call a person reviews. */
export const reviewedToolCall = z.object({
  /** The tool's name (`issue_store_credit`). */
  name: z.string().min(1),
  args: jsonObject,
  /** What the agent says it is about to do, for the reviewer. */
  description: z.string().optional(),
  allowed: z.array(z.enum(REVIEW_DECISIONS)).min(1),
  /** JSON Schema of the arguments: the edit form is generated from it and edited arguments are checked against it. */
  argsSchema: jsonObject.optional(),
});
export type ReviewedToolCall = z.infer<typeof reviewedToolCall>;

export const toolReviewPayload = z.object({
  action: z.literal("tool_review"),
  title: z.string(),
  /** Which standard raised it: the answer is given in that standard's resume format. */
  format: z.enum(["langchain", "agent_inbox"]),
  requests: z.array(reviewedToolCall).min(1).max(20),
});
export type ToolReviewPayload = z.infer<typeof toolReviewPayload>;

const reason = z.string().trim().max(2000);

/** LangChain's resume value. */
export const langchainDecisions = z.strictObject({
  decisions: z.array(
    z.discriminatedUnion("type", [
      z.strictObject({ type: z.literal("approve") }),
      z.strictObject({
        type: z.literal("edit"),
        editedAction: z.strictObject({ name: z.string().min(1), args: jsonObject }),
      }),
      z.strictObject({ type: z.literal("reject"), message: reason.optional() }),
    ]),
  ),
});

/** agent-inbox's resume value. */
export const agentInboxResponses = z.array(
  z.discriminatedUnion("type", [
    z.strictObject({ type: z.literal("accept"), args: z.null().optional() }),
    // agent-inbox sends `args: null`; the console sends the reviewer's note there, when there is one (a graph written
    // for agent-inbox reads only `type` for an ignore, so the note changes nothing it does, and reaches it).
    z.strictObject({ type: z.literal("ignore"), args: reason.nullable().optional() }),
    z.strictObject({ type: z.literal("response"), args: reason.min(1, "say what to tell the agent") }),
    z.strictObject({
      type: z.literal("edit"),
      args: z.strictObject({ action: z.string().min(1), args: jsonObject }),
    }),
  ]),
);

/** Either standard's answer (the shape alone: `answerSchema` checks it against the request). */
export const toolReviewAnswer = z.union([langchainDecisions, agentInboxResponses]);
export type ToolReviewAnswer = z.infer<typeof toolReviewAnswer>;

/** One reviewer decision in our own words, whatever the format. */
export type ReviewDecision =
  | { type: "approve" }
  | { type: "edit"; args: Record<string, unknown> }
  | { type: "reject"; message?: string }
  | { type: "respond"; message: string }
  | { type: "ignore"; note?: string };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * A raw interrupt value in one of the standard formats, as a `tool_review` payload; null when it is neither (an
 * already-read payload, with `action`, is left to the contract).
 */
export function readStandardInterrupt(value: unknown): ToolReviewPayload | null {
  if (isObject(value) && Array.isArray(value.actionRequests) && Array.isArray(value.reviewConfigs)) {
    const configs = value.reviewConfigs.filter(isObject);
    const requests = value.actionRequests.filter(isObject).map((r, i) => {
      // The middleware writes one config per request, in order; match by name for anything else.
      const config =
        configs[i]?.actionName === r.name ? configs[i] : configs.find((c) => c.actionName === r.name);
      return {
        name: r.name,
        args: r.args,
        description: r.description,
        allowed: config?.allowedDecisions,
        argsSchema: config?.argsSchema,
      };
    });
    return {
      action: "tool_review",
      title: titleOf(requests),
      format: "langchain",
      requests,
    } as ToolReviewPayload;
  }
  const list = Array.isArray(value) ? value : [value];
  if (list.length > 0 && list.every((h) => isObject(h) && isObject(h.action_request) && isObject(h.config))) {
    const requests = (list as Record<string, Record<string, unknown>>[]).map((h) => {
      const config = h.config as Record<string, unknown>;
      const allowed: ReviewDecisionType[] = [];
      if (config.allow_accept) allowed.push("approve");
      if (config.allow_edit) allowed.push("edit");
      if (config.allow_ignore) allowed.push("ignore");
      if (config.allow_respond) allowed.push("respond");
      const request = h.action_request as Record<string, unknown>;
      return {
        name: request.action,
        args: request.args,
        description: h.description ?? undefined,
        allowed,
        ...(isObject(config.args_schema) ? { argsSchema: config.args_schema } : {}),
      };
    });
    return {
      action: "tool_review",
      title: titleOf(requests),
      format: "agent_inbox",
      requests,
    } as ToolReviewPayload;
  }
  return null;
}

function titleOf(requests: { name?: unknown }[]): string {
  const names = requests.map((r) => (typeof r.name === "string" ? r.name : "?"));
  return requests.length === 1
    ? `Review tool call: ${names[0]}`
    : `Review ${requests.length} tool calls: ${names.join(", ")}`;
}

/** The answer in our own words, one decision per request (empty when it is not a tool-review answer). */
export function reviewDecisions(answer: unknown): ReviewDecision[] {
  if (isObject(answer) && Array.isArray(answer.decisions)) {
    return answer.decisions.filter(isObject).map((d): ReviewDecision => {
      if (d.type === "edit")
        return { type: "edit", args: (d.editedAction as { args: Record<string, unknown> }).args };
      if (d.type === "reject")
        return { type: "reject", ...(typeof d.message === "string" ? { message: d.message } : {}) };
      return { type: "approve" };
    });
  }
  if (Array.isArray(answer)) {
    return answer.filter(isObject).map((d): ReviewDecision => {
      if (d.type === "edit")
        return { type: "edit", args: (d.args as { args: Record<string, unknown> }).args };
      if (d.type === "response") return { type: "respond", message: String(d.args) };
      if (d.type === "ignore")
        return typeof d.args === "string" && d.args ? { type: "ignore", note: d.args } : { type: "ignore" };
      return { type: "approve" };
    });
  }
  return [];
}

/** Our decisions as the payload's format resumes them. */
export function encodeDecisions(payload: ToolReviewPayload, decisions: readonly ReviewDecision[]): unknown {
  if (payload.format === "langchain") {
    return {
      decisions: decisions.map((d, i) => {
        if (d.type === "edit")
          return { type: "edit", editedAction: { name: payload.requests[i]?.name ?? "", args: d.args } };
        if (d.type === "reject") return { type: "reject", ...(d.message ? { message: d.message } : {}) };
        if (d.type === "respond") return { type: "reject", message: d.message };
        // LangChain has no "ignore": it is a refusal the model reads.
        if (d.type === "ignore") return { type: "reject", ...(d.note ? { message: d.note } : {}) };
        return { type: "approve" };
      }),
    };
  }
  return decisions.map((d, i) => {
    if (d.type === "edit")
      return { type: "edit", args: { action: payload.requests[i]?.name ?? "", args: d.args } };
    // agent-inbox has no "reject": an ignore, its reason kept as the note.
    if (d.type === "reject" || d.type === "ignore") {
      const note = d.type === "reject" ? d.message : d.note;
      return { type: "ignore", args: note ? note : null };
    }
    if (d.type === "respond") return { type: "response", args: d.message };
    return { type: "accept", args: null };
  });
}

/**
 * Whether LangChain sends this answer's whole batch back to the model: its `humanInTheLoopMiddleware` (JS) runs none
 * of a batch's calls once one of them is rejected (respond and ignore are rejections in its format) — the approved and
 * edited ones included; the model is asked again with the rejections. agent-inbox's responses are each their own.
 */
export function sentBackToModel(answer: unknown): boolean {
  return (
    isObject(answer) &&
    Array.isArray(answer.decisions) &&
    answer.decisions.length > 1 &&
    answer.decisions.some((d) => isObject(d) && d.type === "reject")
  );
}

/** Whether this answer lets any reviewed tool call run (approve or edit): the answer that acts on the world. */
export function toolReviewActs(answer: unknown): boolean {
  return (
    !sentBackToModel(answer) && reviewDecisions(answer).some((d) => d.type === "approve" || d.type === "edit")
  );
}

/**
 * The answer schema for a request: one decision per tool call, each of a kind its config allows, an edit naming the
 * same tool with arguments that fit its schema (when it declares one).
 */
export function toolReviewAnswerSchema(payload: ToolReviewPayload): z.ZodType {
  const base = payload.format === "langchain" ? langchainDecisions : agentInboxResponses;
  const argsSchemas = payload.requests.map((r) => (r.argsSchema ? argsSchemaOf(r.argsSchema) : null));
  return base.superRefine((answer, ctx) => {
    const decisions = reviewDecisions(answer);
    if (decisions.length !== payload.requests.length) {
      ctx.addIssue({
        code: "custom",
        message: `give one decision for each of the ${payload.requests.length} tool calls (got ${decisions.length})`,
        path: payload.format === "langchain" ? ["decisions"] : [],
      });
      return;
    }
    const raw =
      payload.format === "langchain" ? (answer as { decisions: unknown[] }).decisions : (answer as unknown[]);
    decisions.forEach((d, i) => {
      const request = payload.requests[i] as ReviewedToolCall;
      const at = payload.format === "langchain" ? ["decisions", i] : [i];
      if (!request.allowed.includes(d.type)) {
        ctx.addIssue({
          code: "custom",
          message: `${request.name} may not be answered with ${d.type} (allowed: ${request.allowed.join(", ")})`,
          path: [...at, "type"],
        });
        return;
      }
      if (d.type !== "edit") return;
      const edited = raw[i] as { editedAction?: { name: string }; args?: { action: string } };
      const name = edited.editedAction?.name ?? edited.args?.action;
      if (name !== request.name) {
        ctx.addIssue({
          code: "custom",
          message: `an edit must keep the tool (${request.name})`,
          path: [...at, "name"],
        });
        return;
      }
      const schema = argsSchemas[i];
      if (!schema) return;
      const checked = schema.safeParse(d.args);
      for (const issue of checked.error?.issues ?? []) {
        ctx.addIssue({
          code: "custom",
          message: argIssueMessage(request.name, issue),
          path: [...at, "args", ...issue.path.map(String)],
        });
      }
    });
  });
}

/** A tool's JSON Schema as a validator (unknown keywords are ignored rather than failing the whole request). */
function argsSchemaOf(schema: Record<string, unknown>): z.ZodType | null {
  try {
    return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    return null;
  }
}

/** An argument that holds an amount in minor units (`amountCents`, `creditCents`): shown and edited as money. */
export function isMoneyArg(name: string): boolean {
  return /[a-z]Cents$/.test(name) || name === "cents";
}

/** `amountCents` → "amount cents": how a field is named to people. */
export function fieldWords(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/[_-]+/g, " ")
    .trim()
    .toLowerCase();
}

/** A schema problem with an edited argument, in words ("amount cents of issue_store_credit must be at most 20000"). */
function argIssueMessage(tool: string, issue: z.core.$ZodIssue): string {
  const last = String(issue.path.at(-1) ?? "");
  // An amount in minor units (`amountCents`) is said as money: "amount … must be at most 200.00", never in cents.
  const money = isMoneyArg(last);
  const shown = (n: number | bigint | undefined) => (money ? (Number(n) / 100).toFixed(2) : String(n));
  const field =
    issue.path.length > 0
      ? `${fieldWords(
          money
            ? issue.path
                .map(String)
                .join(" ")
                .replace(/Cents$/, "")
            : issue.path.map(String).join(" "),
        )} of ${tool}`
      : `the arguments of ${tool}`;
  const i = issue as z.core.$ZodIssue & {
    maximum?: number | bigint;
    minimum?: number | bigint;
    origin?: string;
    keys?: string[];
    expected?: string;
    values?: unknown[];
  };
  switch (issue.code) {
    case "too_big":
      return i.origin === "string"
        ? `${field} may have at most ${i.maximum} characters`
        : `${field} must be at most ${shown(i.maximum)}`;
    case "too_small":
      if (i.origin !== "string") return `${field} must be at least ${shown(i.minimum)}`;
      return Number(i.minimum) <= 1
        ? `${field} is required`
        : `${field} needs at least ${i.minimum} characters`;
    case "invalid_type":
      return `${field} must be ${i.expected === "int" ? "a whole number" : `a ${i.expected}`}`;
    case "unrecognized_keys":
      return `${tool} has no argument ${(i.keys ?? []).map((k) => `"${k}"`).join(", ")}`;
    case "invalid_value":
      return `${field} must be one of: ${(i.values ?? []).map(String).join(", ")}`;
    default:
      return `${field} is not valid`;
  }
}
