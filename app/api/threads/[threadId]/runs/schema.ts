import { RunAgentInputSchema } from "@ag-ui/core/schemas";
import { z } from "zod";

// biome-ignore lint/suspicious/noControlCharactersInRegex: ids with control characters are refused
const ID = /^[^\u0000-\u001f\u007f]{1,200}$/;
const KNOWN_KEYS = Object.keys(RunAgentInputSchema.shape);

/**
 * Body of `POST /api/threads/{id}/runs`: an AG-UI RunAgentInput (validated by the SDK's own schema), with bounds the
 * protocol leaves open — ids of at most 200 characters, at most 200 messages of at most 20,000 characters, at most
 * 50 resume entries — and no keys the protocol does not define.
 */
export const runBody = z
  .unknown()
  .superRefine((value, ctx) => {
    if (!value || typeof value !== "object" || Array.isArray(value)) return;
    for (const key of Object.keys(value)) {
      if (!KNOWN_KEYS.includes(key)) {
        ctx.addIssue({ code: "custom", path: [key.slice(0, 40)], message: "is not a RunAgentInput field" });
      }
    }
  })
  .pipe(RunAgentInputSchema)
  .superRefine((input, ctx) => {
    const id = (path: (string | number)[], value: unknown) => {
      if (typeof value === "string" && !ID.test(value)) {
        ctx.addIssue({
          code: "custom",
          path,
          message: "must be 1 to 200 characters without control characters",
        });
      }
    };
    id(["threadId"], input.threadId);
    id(["runId"], input.runId);
    if (input.parentRunId !== undefined) id(["parentRunId"], input.parentRunId);
    if (input.messages.length > 200) {
      ctx.addIssue({ code: "custom", path: ["messages"], message: "must have at most 200 messages" });
    }
    input.messages.forEach((m, i) => {
      id(["messages", i, "id"], m.id);
      const content = (m as { content?: unknown }).content;
      if (JSON.stringify(content ?? "").length > 20_000) {
        ctx.addIssue({ code: "custom", path: ["messages", i, "content"], message: "is too long" });
      }
    });
    const resume = input.resume ?? [];
    if (resume.length > 50) {
      ctx.addIssue({ code: "custom", path: ["resume"], message: "must have at most 50 entries" });
    }
    resume.forEach((r, i) => {
      id(["resume", i, "interruptId"], r.interruptId);
    });
  });
