import { request } from "node:http";
import fc from "fast-check";
import { authedFetch, authHeaders, emailOf, type Who } from "../support/auth";
import { agentFor, createTicket, postRun, runBody, runOnce } from "./client";
import { useTestServer } from "./setup";
import { readSse } from "./sse";

/**
 * No one approves alone: state that carries a decision, an amount or a side effect cannot be written by a fork; an
 * edited branch never auto-approves; four-eyes bars everyone whose input led to a request; every run has a
 * principal. Against `next start` on Postgres; the extra orders are 500.00 televisions, so every refund of one
 * needs a person (the policy's automatic limit is 50.00) and an operator may approve it (four-eyes limit 500.00).
 */
describe("decisions only through the ledger", () => {
  const ctx = useTestServer("integrity", { prefix: "ORD-7", count: 60 });
  const url = ctx.url;
  let nextOrder = 0;
  const order = () => `ORD-7${String(nextOrder++).padStart(3, "0")}`;

  /** Every row a refused request must leave alone, and the state of every decision. */
  async function snapshot() {
    const [row] = await ctx.prepared.sql.rows(
      `SELECT (SELECT count(*) FROM threads)::int AS threads, (SELECT count(*) FROM runs)::int AS runs,
        (SELECT count(*) FROM events)::int AS events, (SELECT count(*) FROM refunds)::int AS refunds,
        (SELECT count(*) FROM outbox)::int AS outbox, (SELECT count(*) FROM checkpoint.checkpoints)::int AS checkpoints,
        (SELECT count(*) FROM checkpoint.checkpoint_writes)::int AS writes, (SELECT count(*) FROM audit_log)::int AS audit,
        (SELECT string_agg(id || ':' || coalesce(last_edited_by, '-'), ',' ORDER BY id) FROM threads) AS editors,
        (SELECT string_agg(interrupt_id || ':' || status, ',' ORDER BY interrupt_id) FROM decisions) AS decisions`,
    );
    return row;
  }

  function post(path: string, body: unknown, who: Who = "supervisor") {
    return authedFetch(
      url(path),
      { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
      who,
    );
  }

  /** Resume the thread with `entries` as `who`. */
  const resumeAs = (threadId: string, entries: unknown[], who: Who) =>
    postRun(ctx.server!.url, threadId, runBody(threadId, entries), who);

  const view = async (threadId: string) =>
    (await authedFetch(url(`/api/threads/${threadId}`), {}, "viewer")).json();

  /** A ticket filed by the intake key and run until it asks for its refund approval. */
  async function pausedAtApproval(orderId = order()) {
    const message = `Refund ${orderId} please, the screen broke.`;
    const threadId = await createTicket(ctx.server!.url, message);
    const run = await runOnce(agentFor(ctx.server!.url, threadId), { message, as: "intake" });
    expect(run.interrupts[0]?.reason).toBe("refund_approval");
    return { threadId, orderId, interruptId: run.interrupts[0]!.id };
  }

  /** The first of `wanted` that the pending select_option offers. */
  function firstOption(pending: { payload?: unknown }, wanted: string[]): string {
    const ids = ((pending.payload as { options?: { id: string }[] })?.options ?? []).map((o) => o.id);
    return wanted.find((id) => ids.includes(id)) ?? wanted[0]!;
  }

  /** The checkpoint the order lookup wrote: forking there runs the policy again. */
  async function lookupCheckpoint(threadId: string): Promise<string> {
    const history = await (await authedFetch(url(`/api/threads/${threadId}/history?limit=200`))).json();
    const found = history.checkpoints.find(
      (c: { writtenBy: { kind: string; nodes?: string[] } }) =>
        c.writtenBy.kind === "nodes" && c.writtenBy.nodes?.includes("lookup_order"),
    );
    expect(found).toBeDefined();
    return found.checkpointId as string;
  }

  /** Fork and wait for the branch's run to end. */
  async function fork(threadId: string, body: Record<string, unknown>, who: Who = "supervisor") {
    const res = await post(`/api/threads/${threadId}/fork`, body, who);
    const json = await res.json();
    if (res.status === 202) await readSse(url(json.events), {}, () => {}, { maxMs: 30_000 });
    return { status: res.status, json };
  }

  async function pendingOf(threadId: string) {
    return (await view(threadId)).pendingInterrupts as {
      interruptId: string;
      action: string;
      payload?: unknown;
    }[];
  }

  const NOT_EDITABLE = [
    "decision",
    "order",
    "policy",
    "refund",
    "refundMethod",
    "reply",
    "email",
    "editedBy",
  ];

  it("refuses fork edits of decisions, amounts, orders and effects — any generated mix — with 422 naming the field, writing nothing", async () => {
    const { threadId } = await pausedAtApproval();
    const checkpointId = await lookupCheckpoint(threadId);
    const forbiddenKey = fc.constantFrom(
      ...NOT_EDITABLE,
      "messages",
      "__proto__",
      "constructor",
      "prototype",
    );
    const wrongTyped = fc.oneof(
      fc.record({
        // Doubles that survive JSON (NaN and Infinity become null, which is a valid "order total").
        requested: fc.oneof(
          fc.string(),
          fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d) || d <= 0),
          fc.constant(1e300),
        ),
      }),
      fc.record({ orderRef: fc.oneof(fc.integer(), fc.string({ maxLength: 12 })) }),
      fc.record({ intent: fc.string({ maxLength: 10 }).filter((s) => s !== "refund" && s !== "other") }),
      fc.record({
        customerMessage: fc.oneof(
          fc.constant(""),
          fc.integer(),
          fc.string({ minLength: 5001, maxLength: 5100 }),
        ),
      }),
    );
    const withForbidden = fc
      .tuple(
        forbiddenKey,
        fc.jsonValue({ maxDepth: 3 }),
        fc.dictionary(fc.constantFrom("reason", "requested"), fc.jsonValue({ maxDepth: 1 })),
      )
      .map(
        ([key, value, rest]) =>
          `{${[`${JSON.stringify(key)}:${JSON.stringify(value) ?? "null"}`, ...Object.entries(rest).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)].join(",")}}`,
      );
    const values = fc.oneof(
      withForbidden,
      wrongTyped.map((v) => JSON.stringify(v)),
    );
    const before = await snapshot();
    await fc.assert(
      fc.asyncProperty(values, async (raw) => {
        const res = await authedFetch(url(`/api/threads/${threadId}/fork`), {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: `{"checkpointId":${JSON.stringify(checkpointId)},"values":${raw}}`,
        });
        const json = await res.json();
        expect(res.status).toBe(422);
        expect(json.code).toBe("unprocessable:fork_values");
        expect((json.details.fields as string[]).length).toBeGreaterThan(0);
      }),
      { seed: 9, numRuns: 120 },
    );
    expect(await snapshot()).toEqual(before);
    const named = await post(`/api/threads/${threadId}/fork`, {
      checkpointId,
      values: { decision: { decision: "approve" } },
    });
    expect((await named.json()).details.fields).toEqual(["decision"]);
    const node = await post(`/api/threads/${threadId}/fork`, {
      checkpointId,
      values: {},
      asNode: "human_review",
    });
    expect(node.status).toBe(422);
    expect((await node.json()).code).toBe("unprocessable:fork_node");
    expect(await snapshot()).toEqual(before);
  });

  it("never lets an edited request be approved by the policy or by its editor; someone else approves it, and the audit says what changed", async () => {
    const { threadId, orderId } = await pausedAtApproval();
    // 10.00 would pass every policy rule: without the edit marker the policy would pay it with no one approving.
    const forked = await fork(threadId, {
      checkpointId: await lookupCheckpoint(threadId),
      values: { requested: 1000 },
    });
    expect(forked.status).toBe(202);
    const [pending] = await pendingOf(threadId);
    expect(pending?.action).toBe("refund_approval");
    expect(await ctx.prepared.sql.count("refunds", "order_id = $1", [orderId])).toBe(0);
    const state = await view(threadId);
    expect(state.values.editedBy).toBeTruthy();
    expect(state.values.policy.findings.map((f: { code: string }) => f.code)).toContain("edited_request");

    const before = await snapshot();
    const approve = [
      { interruptId: pending!.interruptId, status: "resolved", payload: { decision: "approve" } },
    ];
    const refused = await resumeAs(threadId, approve, "supervisor");
    expect(refused.status).toBe(403);
    expect(refused.json?.code).toBe("forbidden:four_eyes_own_thread");
    expect(await snapshot()).toEqual(before);

    const ok = await resumeAs(threadId, approve, "operator");
    expect(ok.status).toBe(200);
    const [refund] = await ctx.prepared.sql.rows<{ amount_cents: number; approved_by: string }>(
      "SELECT amount_cents, approved_by FROM refunds WHERE order_id = $1",
      [orderId],
    );
    expect(refund).toEqual({ amount_cents: 1000, approved_by: emailOf("operator") });
    // The editor may not send the reply drafted from their edit either.
    const [mail] = await pendingOf(threadId);
    expect(mail?.action).toBe("confirm_email");
    const send = [{ interruptId: mail!.interruptId, status: "resolved", payload: { choice: "send" } }];
    const noMail = await resumeAs(threadId, send, "supervisor");
    expect(noMail.json?.code).toBe("forbidden:four_eyes_edited");
    const audit = await (
      await authedFetch(url(`/api/audit?action=fork&threadId=${threadId}`), {}, "viewer")
    ).json();
    expect(audit.items[0].detail.changes).toMatchObject({ requested: { to: 1000 } });
  });

  it("generated forks with edits never produce a refund or email that no eligible second person approved", async () => {
    const edits = fc.record(
      {
        requested: fc.oneof(fc.integer({ min: 1, max: 50_000 }), fc.constant(null)),
        reason: fc.string({ maxLength: 40 }),
        intent: fc.constantFrom("refund", "other"),
        customerMessage: fc.string({ minLength: 1, maxLength: 60 }).filter((s) => s.trim().length > 0),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(
        edits,
        fc.constantFrom("classify", "lookup_order", undefined),
        async (values, asNode) => {
          const { threadId, orderId } = await pausedAtApproval();
          const body = {
            checkpointId: await lookupCheckpoint(threadId),
            values,
            ...(asNode ? { asNode } : {}),
          };
          const forked = await fork(threadId, body);
          expect(forked.status).toBe(202);
          // Walk the branch: the editor tries every decision first, then someone else answers what is left.
          for (let step = 0; step < 6; step++) {
            const pending = await pendingOf(threadId);
            if (pending.length === 0) break;
            const p = pending[0]!;
            const payload =
              p.action === "refund_approval"
                ? { decision: "approve" }
                : p.action === "confirm_email"
                  ? { choice: "send" }
                  : p.action === "select_option"
                    ? // How to pay back; who the sender is (an edited message no longer names the order); or reply
                      // yourself (no order left to write to).
                      { optionId: firstOption(p, ["original_payment", "sender_is_customer", "replied"]) }
                    : { text: orderId };
            const entry = [{ interruptId: p.interruptId, status: "resolved", payload }];
            const mine = await resumeAs(threadId, entry, "supervisor");
            if (p.action === "refund_approval" || p.action === "confirm_email") {
              expect(mine.status).toBe(403);
              const other = await resumeAs(threadId, entry, "admin");
              expect(other.status).toBe(200);
            } else expect([200, 403]).toContain(mine.status);
          }
          const refunds = await ctx.prepared.sql.rows<{ approved_by: string }>(
            "SELECT approved_by FROM refunds WHERE order_id = $1",
            [orderId],
          );
          for (const r of refunds) expect(r.approved_by).toBe("admin@test.local");
          const mails = await ctx.prepared.sql.count("outbox", "thread_id = $1", [threadId]);
          const sentBy = await ctx.prepared.sql.rows<{ resolved_by: string }>(
            "SELECT resolved_by FROM decisions WHERE thread_id = $1 AND action = 'confirm_email' AND outcome <> 'dont_send'",
            [threadId],
          );
          expect(mails).toBeLessThanOrEqual(sentBy.length);
          for (const s of sentBy) expect(s.resolved_by).not.toBe(emailOf("supervisor"));
        },
      ),
      { seed: 11, numRuns: 6 },
    );
  });

  it("a decision answered again after a fork obeys four-eyes: the forker cannot approve it", async () => {
    const { threadId, interruptId } = await pausedAtApproval();
    const approve = (id: string) => [
      { interruptId: id, status: "resolved", payload: { decision: "approve" } },
    ];
    expect((await resumeAs(threadId, approve(interruptId), "operator")).status).toBe(200);
    const approvalCheckpoint = (await view(threadId)).decisions.find(
      (d: { action: string }) => d.action === "refund_approval",
    ).checkpointId;
    expect((await fork(threadId, { checkpointId: approvalCheckpoint })).status).toBe(202);
    const [again] = await pendingOf(threadId);
    expect(again?.action).toBe("refund_approval");
    const refused = await resumeAs(threadId, approve(again!.interruptId), "supervisor");
    expect(refused.json?.code).toBe("forbidden:four_eyes_own_thread");
    // Someone else may answer it — but the main line refunded the order in full meanwhile: an approval is money that
    // is gone (422, checked against the ledger now), a rejection is taken.
    const gone = await resumeAs(threadId, approve(again!.interruptId), "admin");
    expect([gone.status, gone.json?.code]).toEqual([422, "unprocessable:answer"]);
    const reject = [
      {
        interruptId: again!.interruptId,
        status: "resolved",
        payload: { decision: "reject", note: "Refunded on the main line already." },
      },
    ];
    expect((await resumeAs(threadId, reject, "admin")).status).toBe(200);
  });

  it("new input on someone else's finished thread: its sender cannot approve what it raised; the run and message are audited", async () => {
    const { threadId, interruptId } = await pausedAtApproval();
    const approve = (id: string) => [
      { interruptId: id, status: "resolved", payload: { decision: "approve" } },
    ];
    await resumeAs(threadId, approve(interruptId), "supervisor");
    const [mail] = await pendingOf(threadId);
    const send = [{ interruptId: mail!.interruptId, status: "resolved", payload: { choice: "send" } }];
    expect((await resumeAs(threadId, send, "supervisor")).status).toBe(200);
    expect((await view(threadId)).status).toBe("completed");

    const other = order();
    const message = `Also refund ${other}, it broke as well.`;
    const started = await postRun(
      ctx.server!.url,
      threadId,
      runBody(threadId, undefined, message),
      "operator",
    );
    expect(started.status).toBe(200);
    const [pending] = await pendingOf(threadId);
    expect(pending?.action).toBe("refund_approval");
    const refused = await resumeAs(threadId, approve(pending!.interruptId), "operator");
    expect(refused.json?.code).toBe("forbidden:four_eyes_own_thread");
    expect(refused.json?.message).toContain("sent input");
    const [run] = await ctx.prepared.sql.rows<{ started_by_label: string }>(
      "SELECT started_by_label FROM runs WHERE thread_id = $1 AND kind = 'input' ORDER BY created_at DESC LIMIT 1",
      [threadId],
    );
    expect(run?.started_by_label).toBe(emailOf("operator"));
    const audit = await (
      await authedFetch(url(`/api/audit?action=run_started&threadId=${threadId}`), {}, "viewer")
    ).json();
    expect(audit.items.map((i: { actor: string }) => i.actor)).toContain(emailOf("operator"));
    expect(audit.items.find((i: { actor: string }) => i.actor === emailOf("operator")).detail.message).toBe(
      message,
    );
    const filed = await (
      await authedFetch(url(`/api/audit?action=ticket_created&threadId=${threadId}`), {}, "viewer")
    ).json();
    expect(filed.items).toHaveLength(1);
  });

  it("whoever names the order when the agent asks for it cannot approve that order's refund", async () => {
    const message = "My television arrived broken, I want my money back.";
    const threadId = await createTicket(ctx.server!.url, message);
    const first = await runOnce(agentFor(ctx.server!.url, threadId), { message, as: "intake" });
    expect(first.interrupts[0]?.reason).toBe("input_text");
    const named = [{ interruptId: first.interrupts[0]!.id, status: "resolved", payload: { text: order() } }];
    expect((await resumeAs(threadId, named, "operator")).status).toBe(200);
    const [identity] = await pendingOf(threadId);
    const checked = [
      { interruptId: identity!.interruptId, status: "resolved", payload: { optionId: "sender_is_customer" } },
    ];
    expect((await resumeAs(threadId, checked, "operator")).status).toBe(200);
    const [pending] = await pendingOf(threadId);
    const approve = [
      { interruptId: pending!.interruptId, status: "resolved", payload: { decision: "approve" } },
    ];
    const refused = await resumeAs(threadId, approve, "operator");
    expect(refused.json?.code).toBe("forbidden:four_eyes_own_thread");
    expect((await resumeAs(threadId, approve, "supervisor")).status).toBe(200);
  });

  it("an intake key starts only tickets it filed", async () => {
    const res = await post("/api/threads", { message: `Refund ${order()} please` }, "operator");
    const { threadId } = await res.json();
    const before = await snapshot();
    const refused = await postRun(ctx.server!.url, threadId, runBody(threadId), "intake");
    expect(refused.status).toBe(403);
    expect(refused.json?.code).toBe("forbidden:api_key_scope");
    expect(await snapshot()).toEqual(before);
  });

  it("stores only what the answer contract defines: unknown and prototype fields are refused, never kept", async () => {
    const { threadId, interruptId } = await pausedAtApproval();
    const before = await snapshot();
    for (const payload of [
      { decision: "approve", junk: "x".repeat(100_000) },
      JSON.parse('{"decision":"approve","__proto__":{"amountCents":1}}'),
      { decision: "reject", note: "no", amountCents: 5 },
    ]) {
      const res = await resumeAs(threadId, [{ interruptId, status: "resolved", payload }], "operator");
      expect(res.status).toBe(422);
      expect(res.json?.code).toBe("unprocessable:answer");
    }
    expect(await snapshot()).toEqual(before);
  });

  it("reads no body before sign-in, bounds it while reading, and refuses non-JSON, deep JSON, NUL bytes and over-long ids", async () => {
    const { threadId } = await pausedAtApproval();
    const before = await snapshot();
    const big = "x".repeat(2 * 1024 * 1024);
    // The server answers before it has read the body and may close the socket under the upload: the status is the
    // answer, whatever happens to the rest of the body afterwards (fetch would report the broken pipe instead).
    expect([401, "closed"]).toContain(
      await statusOfUpload(url("/api/threads"), [JSON.stringify({ message: big })]),
    );
    const operatorHeaders = await authHeaders(ctx.server!.url, "operator");
    expect([413, "closed"]).toContain(
      await statusOfUpload(url("/api/threads"), [JSON.stringify({ message: big })], operatorHeaders),
    );
    // A body streamed without a declared length (chunked) is cut off once it passes the limit.
    const streamed = await statusOfUpload(
      url("/api/threads"),
      Array.from({ length: 64 }, () => " ".repeat(64 * 1024)),
      operatorHeaders,
    );
    expect([413, "closed"]).toContain(streamed);
    const plain = await authedFetch(
      url("/api/threads"),
      { method: "POST", headers: { "content-type": "text/plain" }, body: '{"message":"refund ORD-1002"}' },
      "operator",
    );
    expect(plain.status).toBe(415);
    const deep = await authedFetch(url(`/api/threads/${threadId}/fork`), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"checkpointId":"x","values":${"[".repeat(10_000)}${"]".repeat(10_000)}}`,
    });
    expect((await deep.json()).code).toBe("bad_request:json_depth");
    const nul = await post("/api/threads", { message: "refund\u0000 ORD-1002" }, "operator");
    expect((await nul.json()).code).toBe("bad_request:nul");
    const longRun = await postRun(
      ctx.server!.url,
      threadId,
      { ...runBody(threadId), runId: "r".repeat(10_000) },
      "operator",
    );
    expect(longRun.status).toBe(400);
    expect(longRun.json?.code).toBe("bad_request:run_input");
    expect(await snapshot()).toEqual(before);
  });

  it("answers out-of-range numbers and dates, tampered cursors and NUL in ids with a 400 naming the field", async () => {
    const tampered = Buffer.from(
      JSON.stringify({ m: "pending", t: "2026-13-45T99:99:99.000000Z", i: "x" }),
    ).toString("base64url");
    const nulCursor = Buffer.from(
      JSON.stringify({ m: "pending", t: "2026-01-01T00:00:00.000000Z", i: "a\u0000" }),
    ).toString("base64url");
    for (const [path, field] of [
      ["/api/threads?minAmount=999999999999", "minAmount"],
      ["/api/threads?olderThan=9999999d", "olderThan"],
      [`/api/threads?cursor=${tampered}`, null],
      [`/api/threads?cursor=${nulCursor}`, null],
      ["/api/audit?from=300000-01-01", "from"],
      ["/api/audit?before=99999999999999999999", "before"],
      ["/api/threads?status=pending&status=all", "status"],
    ] as const) {
      const res = await authedFetch(url(path), {}, "viewer");
      expect(res.status, path).toBe(400);
      const json = await res.json();
      if (field) expect(json.details.fields, path).toContain(field);
    }
    const nulId = await authedFetch(url("/api/threads/abc%00def"), {}, "viewer");
    expect(nulId.status).toBe(400);
    const longId = await authedFetch(url(`/api/threads/${"a".repeat(10_000)}/history`), {}, "viewer");
    expect(longId.status).toBe(400);
  });
});

/**
 * POST `chunks` (one chunk: with its length declared; several: chunked, no length) and resolve with the response's
 * status as soon as it arrives, even while the body is still being sent — or "closed" when the server closed the
 * connection under the upload before its answer could be read: it answered without reading the body, and closing a
 * socket with unread data resets it, which may drop the answer on the client's side. Either way the body was not
 * taken; what the server wrote is checked separately.
 */
function statusOfUpload(
  target: string,
  chunks: string[],
  headers: Record<string, string> = {},
): Promise<number | "closed"> {
  return new Promise((resolve, reject) => {
    let status: number | undefined;
    const req = request(
      target,
      { method: "POST", headers: { ...headers, "content-type": "application/json" } },
      (res) => {
        status = res.statusCode;
        res.resume();
        resolve(status ?? 0);
      },
    );
    req.on("error", (error: NodeJS.ErrnoException) => {
      if (status !== undefined) return;
      if (error.code === "EPIPE" || error.code === "ECONNRESET") resolve("closed");
      else reject(error);
    });
    if (chunks.length === 1) req.end(chunks[0]);
    else {
      for (const chunk of chunks) req.write(chunk);
      req.end();
    }
  });
}
