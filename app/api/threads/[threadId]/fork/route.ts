import { z } from "zod";
import { requireRole } from "@/lib/auth/principal";
import { errorResponse } from "@/lib/errors";
import { REFUND_NODES, RefundState } from "@/lib/graphs/refund";
import { assertSameOrigin, parseWith, readJson } from "@/lib/http";
import { forkThread } from "@/lib/runtime/fork";

export const dynamic = "force-dynamic";

const CHANNELS = Object.keys(RefundState.spec).filter((k) => k !== "messages");

const forkBody = z.object({
  checkpointId: z.string().min(1).max(200),
  /** State edits applied on the branch before it runs (not `messages`). */
  values: z
    .record(z.string(), z.unknown())
    .refine((v) => Object.keys(v).every((k) => CHANNELS.includes(k)), {
      message: `values may only set: ${CHANNELS.join(", ")}`,
    })
    .optional(),
  /** Apply `values` as if this node wrote them (decides what runs next). */
  asNode: z.enum(REFUND_NODES).optional(),
});

/**
 * Time travel: branch the thread from a checkpoint (optionally editing state first), make the branch the head and
 * run it. Answers 202 with the run id, the branch's first checkpoint, side-effect warnings and the seq to stream
 * the run's events after (`GET …/events?after=`).
 */
export async function POST(request: Request, { params }: { params: Promise<{ threadId: string }> }) {
  try {
    assertSameOrigin(request);
    const by = await requireRole(request, "supervisor");
    const { threadId } = await params;
    const body = parseWith(forkBody, await readJson(request), "bad_request:fork", "The fork request");
    const result = await forkThread({ threadId, by, ...body });
    return Response.json(
      { ...result, events: `/api/threads/${threadId}/events?after=${result.afterSeq}` },
      { status: 202 },
    );
  } catch (error) {
    return errorResponse(error, "POST /api/threads/[threadId]/fork");
  }
}
