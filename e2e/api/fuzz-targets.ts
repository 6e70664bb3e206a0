import fc from "fast-check";
import {
  type BodySpec,
  contentType,
  crossSiteHeaders,
  forgedBearer,
  forgedMetricsToken,
  garbageCursor,
  hostileBody,
  hostileDate,
  hostileId,
  hostileNumberText,
  hostileQuery,
  hostileString,
  type Sender,
  sender,
  tamperedInboxCursor,
} from "../support/hostile";

/*
 * The route-methods the fuzz suite covers and, for each, how a hostile request to it is generated. Ids come from
 * threads, checkpoints, interrupts, users and keys the suite prepares first, so most requests reach past the
 * authentication gate into the handlers.
 */

/** One generated request. */
export interface HostileRequest {
  method: string;
  /** Path and query, already percent-encoded (or deliberately mis-encoded). */
  path: string;
  sender: Sender;
  /** Extra headers (cross-site markers, forged credentials, Last-Event-ID). */
  headers: Record<string, string>;
  body?: BodySpec;
  contentType?: string | null;
}

/** What the suite prepared before fuzzing. */
export interface FuzzContext {
  origin: string;
  threadIds: string[];
  /** [threadId, checkpointId] of real checkpoints. */
  checkpoints: [string, string][];
  interruptIds: string[];
  /** Real effect ids (the done thread's refund and email). */
  effectIds: string[];
  victimUserIds: string[];
  victimKeyIds: string[];
  victimEmail: string;
  inboxCursors: string[];
  auditIds: number[];
}

export interface Target {
  name: string;
  build(ctx: FuzzContext): fc.Arbitrary<HostileRequest>;
}

const OPERATOR: Sender[] = ["operator", "supervisor", "admin"];
const VIEWER: Sender[] = ["viewer", ...OPERATOR];

/** A real id most of the time, else a hostile one. */
function idFrom<T extends string>(real: T[]): fc.Arbitrary<string> {
  return real.length
    ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...real) }, { weight: 2, arbitrary: hostileId })
    : hostileId;
}

/** Mostly real [thread, checkpoint] pairs, sometimes crossed with another thread, or hostile. */
function checkpointPath(ctx: FuzzContext, suffix = ""): fc.Arbitrary<string> {
  return fc
    .oneof(
      { weight: 4, arbitrary: fc.constantFrom(...ctx.checkpoints) },
      { weight: 2, arbitrary: fc.tuple(idFrom(ctx.threadIds), idFrom(ctx.checkpoints.map((c) => c[1]))) },
    )
    .map(([t, c]) => `/api/threads/${t}/checkpoints/${c}${suffix}`);
}

interface Shape {
  method: string;
  path: fc.Arbitrary<string>;
  senders: fc.Arbitrary<Sender>;
  query?: fc.Arbitrary<string>;
  body?: fc.Arbitrary<BodySpec>;
  headers?: fc.Arbitrary<Record<string, string>>;
}

function request(shape: Shape): fc.Arbitrary<HostileRequest> {
  return fc
    .record({
      path: shape.path,
      query:
        shape.query ??
        fc.oneof({ weight: 9, arbitrary: fc.constant("") }, { weight: 1, arbitrary: hostileQuery({}) }),
      sender: shape.senders,
      body: shape.body ?? fc.constant(undefined),
      contentType: shape.body ? contentType : fc.constant(null),
      cross: crossSiteHeaders,
      extra: shape.headers ?? fc.constant({}),
      bearer: forgedBearer,
    })
    .map(({ path, query, sender, body, contentType, cross, extra, bearer }) => ({
      method: shape.method,
      path: query ? `${path}?${query}` : path,
      sender,
      headers: { ...extra, ...cross, ...(sender === "bad-bearer" ? { authorization: bearer } : {}) },
      ...(body ? { body, contentType } : {}),
    }));
}

const obj = <T extends Record<string, fc.Arbitrary<unknown>>>(fields: T, required: (keyof T)[] = []) =>
  fc.record(fields, { requiredKeys: required as never[] }) as fc.Arbitrary<Record<string, unknown>>;

const limit = fc.oneof(fc.constantFrom("1", "50", "200", "201", "0"), hostileNumberText);

/** Answers that no contract accepts (out of range, unknown decisions, over-long notes). */
const badAnswer = fc.oneof(
  fc.constantFrom(
    { decision: "approve_partial", amountCents: 99_999_999 },
    { decision: "approve_partial", amountCents: 1e308 },
    { decision: "approve_partial", amountCents: -5 },
    { decision: "reject", note: "" },
    { decision: "maybe" },
    { decision: "approve", note: "x".repeat(2001) },
  ),
  fc.record({
    decision: fc.constantFrom("approve_partial", "reject"),
    amountCents: fc.double(),
    note: hostileString,
  }),
);

function runBody(ctx: FuzzContext, threadId: string): fc.Arbitrary<Record<string, unknown>> {
  const answer = badAnswer;
  const resumeEntry = fc.record({
    interruptId: idFrom(ctx.interruptIds),
    status: fc.constantFrom("resolved", "cancelled", "pending"),
    payload: answer,
  });
  return obj(
    {
      threadId: fc.oneof(
        { weight: 6, arbitrary: fc.constant(threadId) },
        { weight: 1, arbitrary: idFrom(ctx.threadIds) },
      ),
      runId: fc.oneof(fc.uuid(), hostileString),
      messages: fc.oneof(
        fc.constant([]),
        fc.constant([{ id: "m1", role: "user", content: "Refund ORD-7010 please, it broke." }]),
        fc.array(
          obj({
            id: hostileString,
            role: fc.constantFrom("user", "system", "tool", "x"),
            content: hostileString,
          }),
          {
            maxLength: 3,
          },
        ),
      ),
      tools: fc.constant([]),
      context: fc.constant([]),
      state: fc.constant({}),
      forwardedProps: fc.constantFrom({}, { actor: "fuzz" }),
      resume: fc.array(resumeEntry, { maxLength: 3 }),
    },
    ["threadId", "runId", "messages", "tools", "context"],
  );
}

const forkValues = obj({
  customerMessage: fc.constantFrom("Refund ORD-7011 please", ""),
  orderRef: fc.constantFrom("ORD-7011", null, "ord-7012"),
  intent: fc.constantFrom("refund", "other"),
  reason: fc.constantFrom("broken", ""),
  requested: fc.constantFrom(100, null, 2_147_483_647),
});

/** A fork's body (and its check's): a checkpoint of the suite's threads, edits right and wrong, a node or none. */
const forkBody = (ctx: FuzzContext) =>
  obj(
    {
      checkpointId: idFrom(ctx.checkpoints.map((c) => c[1])),
      values: fc.oneof(
        forkValues,
        forkValues.map((v) => ({ ...v, decision: "approve" })),
      ),
      asNode: fc.constantFrom("classify", "lookup_order", "finalize", "__start__"),
    },
    ["checkpointId"],
  );

const ROLES = fc.constantFrom("viewer", "operator", "supervisor", "admin");

/** Every route and method, then the unsupported methods. */
export const TARGETS: Target[] = [
  {
    name: "GET /api/health",
    build: () => request({ method: "GET", path: fc.constant("/api/health"), senders: sender(VIEWER) }),
  },
  {
    name: "GET /api/metrics",
    build: () =>
      request({
        method: "GET",
        path: fc.constant("/api/metrics"),
        senders: sender(["admin"]),
        headers: fc.oneof(
          { weight: 3, arbitrary: fc.constant({}) },
          { weight: 1, arbitrary: forgedMetricsToken.map((v) => ({ authorization: v })) },
        ),
      }),
  },
  {
    name: "GET /api/threads",
    build: (ctx) =>
      request({
        method: "GET",
        path: fc.constant("/api/threads"),
        senders: sender(VIEWER),
        query: hostileQuery({
          status: fc.constantFrom(
            "pending",
            "running",
            "interrupted",
            "completed",
            "failed",
            "idle",
            "all",
            "x",
          ),
          action: fc.constantFrom("refund_approval", "unknown", "select_option", "__proto__"),
          minAmount: hostileNumberText,
          maxAmount: hostileNumberText,
          olderThan: fc.oneof(
            fc.constantFrom("90s", "15m", "2h", "3d", "999999999d", "1y", "-1s"),
            hostileNumberText,
          ),
          cursor: fc.oneof(fc.constantFrom(...ctx.inboxCursors), tamperedInboxCursor, garbageCursor),
          limit,
        }),
      }),
  },
  {
    name: "POST /api/threads",
    build: () =>
      request({
        method: "POST",
        path: fc.constant("/api/threads"),
        senders: sender(["intake", ...OPERATOR]),
        body: hostileBody(
          obj(
            {
              message: fc.constantFrom("Refund ORD-7005 please, it broke.", "hello"),
              orderRef: fc.constantFrom("ORD-7005", "ord-1001", "ORD-12345"),
              title: fc.constantFrom("Broken television", "t"),
            },
            ["message"],
          ),
        ),
      }),
  },
  {
    name: "GET /api/threads/[threadId]",
    build: (ctx) =>
      request({
        method: "GET",
        path: idFrom(ctx.threadIds).map((t) => `/api/threads/${t}`),
        senders: sender(VIEWER),
      }),
  },
  {
    name: "GET /api/threads/[threadId]/history",
    build: (ctx) =>
      request({
        method: "GET",
        path: idFrom(ctx.threadIds).map((t) => `/api/threads/${t}/history`),
        senders: sender(VIEWER),
        query: hostileQuery({ before: idFrom(ctx.checkpoints.map((c) => c[1])), limit }),
      }),
  },
  {
    name: "GET /api/threads/[threadId]/checkpoints/[checkpointId]",
    build: (ctx) => request({ method: "GET", path: checkpointPath(ctx), senders: sender(VIEWER) }),
  },
  {
    name: "GET /api/threads/[threadId]/checkpoints/[checkpointId]/side-effects",
    build: (ctx) =>
      request({ method: "GET", path: checkpointPath(ctx, "/side-effects"), senders: sender(VIEWER) }),
  },
  {
    name: "GET /api/threads/[threadId]/events",
    build: (ctx) =>
      request({
        method: "GET",
        path: idFrom(ctx.threadIds).map((t) => `/api/threads/${t}/events`),
        senders: sender(VIEWER),
        query: hostileQuery({
          after: fc.oneof(fc.constantFrom("0", "1", "999999999999999"), hostileNumberText),
        }),
        headers: fc.oneof(
          { weight: 3, arbitrary: fc.constant({}) },
          { weight: 1, arbitrary: hostileNumberText.map((v) => ({ "last-event-id": v })) },
        ),
      }),
  },
  {
    name: "POST /api/threads/[threadId]/runs",
    build: (ctx) =>
      idFrom(ctx.threadIds).chain((threadId) =>
        request({
          method: "POST",
          path: fc.constant(`/api/threads/${threadId}/runs`),
          senders: sender(["intake", ...OPERATOR]),
          body: hostileBody(runBody(ctx, threadId)),
          headers: fc.constantFrom<Record<string, string>>({ accept: "text/event-stream" }, {}),
        }),
      ),
  },
  {
    name: "POST /api/threads/[threadId]/decisions/[interruptId]",
    build: (ctx) =>
      request({
        method: "POST",
        path: fc
          .tuple(idFrom(ctx.threadIds), idFrom(ctx.interruptIds))
          .map(([t, i]) => `/api/threads/${t}/decisions/${i}`),
        senders: sender(["intake", ...OPERATOR]),
        body: hostileBody(
          obj({ status: fc.constantFrom("resolved", "cancelled", "answered"), answer: badAnswer }, []),
        ),
      }),
  },
  {
    name: "GET /api/threads/[threadId]/effects",
    build: (ctx) =>
      request({
        method: "GET",
        path: idFrom(ctx.threadIds).map((t) => `/api/threads/${t}/effects`),
        senders: sender(VIEWER),
      }),
  },
  {
    name: "POST /api/threads/[threadId]/effects/[effectId]",
    build: (ctx) =>
      request({
        method: "POST",
        path: fc
          .tuple(idFrom(ctx.threadIds), idFrom(ctx.effectIds.length > 0 ? ctx.effectIds : ["none"]))
          .map(([t, e]) => `/api/threads/${t}/effects/${e}`),
        senders: sender(["intake", ...OPERATOR]),
        body: hostileBody(
          obj(
            {
              action: fc.constantFrom(
                "retry",
                "refunded_manually",
                "confirmed_delivered",
                "mark_handled",
                "delete",
              ),
              note: hostileString,
            },
            ["action"],
          ),
        ),
      }),
  },
  {
    name: "POST /api/threads/[threadId]/runs/[runId]/cancel",
    build: (ctx) =>
      request({
        method: "POST",
        path: fc
          .tuple(idFrom(ctx.threadIds), hostileId)
          .map(([t, r]) => `/api/threads/${t}/runs/${encodeURIComponent(r)}/cancel`),
        senders: sender(["viewer", "operator", "supervisor"]),
        body: hostileBody(obj({ note: hostileString }, [])),
      }),
  },
  {
    name: "POST /api/threads/[threadId]/close",
    build: (ctx) =>
      request({
        method: "POST",
        path: idFrom(ctx.threadIds).map((t) => `/api/threads/${t}/close`),
        senders: sender(["operator", "supervisor"]),
        body: hostileBody(obj({ note: hostileString }, ["note"])),
      }),
  },
  {
    name: "POST /api/threads/[threadId]/migrate",
    build: (ctx) =>
      request({
        method: "POST",
        path: idFrom(ctx.threadIds).map((t) => `/api/threads/${t}/migrate`),
        senders: sender(["operator", "supervisor"]),
        body: hostileBody(obj({ version: fc.constantFrom("1", "2") }, [])),
      }),
  },
  {
    name: "POST /api/threads/[threadId]/fork",
    build: (ctx) =>
      request({
        method: "POST",
        path: idFrom(ctx.threadIds).map((t) => `/api/threads/${t}/fork`),
        senders: sender(["supervisor", "admin"]),
        body: hostileBody(forkBody(ctx)),
      }),
  },
  {
    // The fork's checks alone: the same hostile bodies, and never a row written, accepted or not.
    name: "POST /api/threads/[threadId]/fork/check",
    build: (ctx) =>
      request({
        method: "POST",
        path: idFrom(ctx.threadIds).map((t) => `/api/threads/${t}/fork/check`),
        senders: sender(["supervisor", "admin"]),
        body: hostileBody(forkBody(ctx)),
      }),
  },
  {
    name: "GET /api/audit",
    build: (ctx) =>
      request({
        method: "GET",
        path: fc.constant("/api/audit"),
        senders: sender(VIEWER),
        query: hostileQuery({
          action: fc.constantFrom("decision", "fork", "sign_in", "x"),
          actor: fc.oneof(fc.constantFrom("%", "_", "\\", "admin"), hostileString),
          threadId: idFrom(ctx.threadIds),
          from: hostileDate,
          to: hostileDate,
          before: fc.oneof(fc.constantFrom(...ctx.auditIds.map(String)), hostileNumberText),
          limit,
        }),
      }),
  },
  {
    name: "POST /api/retention/prune",
    build: () =>
      request({
        method: "POST",
        path: fc.constant("/api/retention/prune"),
        senders: sender(["supervisor", "admin"]),
        // Valid-looking prunes are dry runs or keep a year: the prepared checkpoints stay.
        body: hostileBody(
          obj({
            keepLatest: fc.constantFrom(1, 5, 1_000_000),
            olderThanSeconds: fc.constantFrom(365 * 86_400, 10 * 365 * 86_400),
            dryRun: fc.constant(true),
          }),
        ),
      }),
  },
  {
    name: "POST /api/retention/apply",
    build: () =>
      request({
        method: "POST",
        path: fc.constant("/api/retention/apply"),
        senders: sender(["admin"]),
        // Valid-looking requests are dry runs: the prepared threads stay.
        body: hostileBody(
          obj({
            dryRun: fc.constant(true),
            steps: fc.constantFrom(["history"], ["events"], ["archive"], ["history", "events", "archive"]),
          }),
        ),
      }),
  },
  {
    name: "POST /api/admin/erasure",
    build: () =>
      request({
        method: "POST",
        path: fc.constant("/api/admin/erasure"),
        senders: sender(["admin"]),
        // Valid-looking erasures name nobody the other targets use.
        body: hostileBody(
          obj({
            email: fc.oneof(
              fc.integer({ min: 0, max: 1e6 }).map((n) => `nobody-${n}@fuzz.invalid`),
              fc.constant("not-an-email"),
            ),
            name: fc.constantFrom("Nobody Fuzzed", "x"),
          }),
        ),
      }),
  },
  {
    name: "GET /api/admin/users",
    build: () =>
      request({ method: "GET", path: fc.constant("/api/admin/users"), senders: sender(["admin"]) }),
  },
  {
    name: "POST /api/admin/users",
    build: () =>
      request({
        method: "POST",
        path: fc.constant("/api/admin/users"),
        senders: sender(["admin"]),
        body: hostileBody(
          obj(
            {
              email: fc.oneof(
                fc.integer({ min: 0, max: 1e6 }).map((n) => `fuzz-${n}@test.local`),
                fc.constantFrom("viewer@test.local", "not-an-email"),
              ),
              name: fc.constantFrom("Fuzz User", ""),
              password: fc.constantFrom("correct-horse-battery", "short"),
              role: ROLES,
            },
            ["email", "name", "password", "role"],
          ),
        ),
      }),
  },
  {
    name: "PATCH /api/admin/users/[userId]",
    build: (ctx) =>
      request({
        method: "PATCH",
        path: idFrom(ctx.victimUserIds).map((u) => `/api/admin/users/${u}`),
        senders: sender(["admin"]),
        body: hostileBody(obj({ role: ROLES, disabled: fc.boolean() })),
      }),
  },
  {
    name: "GET /api/admin/keys",
    build: () => request({ method: "GET", path: fc.constant("/api/admin/keys"), senders: sender(["admin"]) }),
  },
  {
    name: "POST /api/admin/keys",
    build: () =>
      request({
        method: "POST",
        path: fc.constant("/api/admin/keys"),
        senders: sender(["admin"]),
        body: hostileBody(obj({ name: fc.constantFrom("fuzz key", "") }, ["name"])),
      }),
  },
  {
    name: "POST /api/admin/keys/[keyId]/revoke",
    build: (ctx) =>
      request({
        method: "POST",
        path: idFrom(ctx.victimKeyIds).map((k) => `/api/admin/keys/${k}/revoke`),
        senders: sender(["admin"]),
        body: fc.oneof(fc.constant({ kind: "none" as const }), hostileBody(obj({}))),
      }),
  },
  {
    name: "GET /api/admin/teams",
    build: () =>
      request({ method: "GET", path: fc.constant("/api/admin/teams"), senders: sender(["admin"]) }),
  },
  {
    name: "POST /api/admin/teams",
    build: () =>
      request({
        method: "POST",
        path: fc.constant("/api/admin/teams"),
        senders: sender(["admin"]),
        body: hostileBody(obj({ name: fc.constantFrom("Fuzz desk", "", " ") }, ["name"])),
      }),
  },
  {
    name: "PATCH /api/admin/teams/[teamId]",
    build: () =>
      request({
        method: "PATCH",
        path: hostileId.map((t) => `/api/admin/teams/${t}`),
        senders: sender(["admin"]),
        body: hostileBody(
          obj({
            name: fc.constantFrom("Fuzz desk", ""),
            members: fc.array(hostileId, { maxLength: 3 }),
            agents: fc.array(fc.constantFrom("refund", "account_change", "no_such_agent"), { maxLength: 3 }),
          }),
        ),
      }),
  },
  {
    name: "DELETE /api/admin/teams/[teamId]",
    build: () =>
      request({
        method: "DELETE",
        path: hostileId.map((t) => `/api/admin/teams/${t}`),
        senders: sender(["admin"]),
      }),
  },
  {
    name: "GET /api/admin/authority",
    build: () =>
      request({ method: "GET", path: fc.constant("/api/admin/authority"), senders: sender(["admin"]) }),
  },
  {
    name: "POST /api/admin/authority",
    build: () =>
      request({
        method: "POST",
        path: fc.constant("/api/admin/authority"),
        senders: sender(["admin"]),
        body: hostileBody(
          obj(
            {
              subjectKind: fc.constantFrom("user", "team", "robot"),
              subjectId: hostileId,
              agentId: fc.constantFrom(null, "refund", "no_such_agent"),
              perDecisionCents: fc.oneof(fc.constant(null), fc.integer({ min: -5, max: 2_000_000_000 })),
              perDayCents: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 100_000 })),
              perCustomer30dCents: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 100_000 })),
            },
            ["subjectKind", "subjectId"],
          ),
        ),
      }),
  },
  {
    name: "GET /api/admin/proposals",
    build: () =>
      request({ method: "GET", path: fc.constant("/api/admin/proposals"), senders: sender(["admin"]) }),
  },
  {
    name: "POST /api/admin/proposals/[proposalId]",
    build: () =>
      request({
        method: "POST",
        path: hostileId.map((id) => `/api/admin/proposals/${id}`),
        senders: sender(["admin"]),
        body: hostileBody(
          obj({ decision: fc.constantFrom("approve", "reject", "apply"), note: fc.string() }, ["decision"]),
        ),
      }),
  },
  {
    name: "POST /api/auth/sign-in/email",
    build: (ctx) =>
      request({
        method: "POST",
        path: fc.constant("/api/auth/sign-in/email"),
        senders: fc.constantFrom<Sender>(
          "anonymous",
          "anonymous",
          "anonymous",
          "viewer",
          "bad-cookie",
          "bad-bearer",
        ),
        headers: fc.constantFrom<Record<string, string>>({ origin: ctx.origin }, { origin: ctx.origin }, {}),
        body: hostileBody(
          obj(
            {
              email: fc.constantFrom("admin@test.local", ctx.victimEmail, "nobody@test.local", "x"),
              password: fc.constantFrom("wrong-password-123", "", "x".repeat(200)),
              rememberMe: fc.boolean(),
              callbackURL: fc.constantFrom("/", "https://evil.example/", "javascript:alert(1)"),
            },
            ["email", "password"],
          ),
        ),
      }),
  },
  {
    name: "POST /api/auth/sign-out",
    build: (ctx) =>
      request({
        method: "POST",
        path: fc.constant("/api/auth/sign-out"),
        // Never a role's cookie: signing those out would end the suite's sessions.
        senders: fc.constantFrom<Sender>("anonymous", "bad-cookie", "bad-bearer", "victim"),
        headers: fc.constantFrom<Record<string, string>>({ origin: ctx.origin }, {}),
        body: fc.oneof(fc.constant({ kind: "none" as const }), hostileBody(obj({}))),
      }),
  },
  {
    name: "GET /api/auth/get-session",
    build: () =>
      request({
        method: "GET",
        path: fc.constant("/api/auth/get-session"),
        senders: sender(VIEWER),
        query: hostileQuery({
          disableCookieCache: fc.constantFrom("true", "false", "1"),
          disableRefresh: hostileString,
        }),
      }),
  },
  {
    name: "GET /api/inbox/stream",
    build: () =>
      request({
        method: "GET",
        path: fc.constant("/api/inbox/stream"),
        senders: sender(VIEWER),
        // Always one-shot: the live stream itself never ends, which the suite would count as a hang.
        query: fc
          .oneof(
            fc.constantFrom("", "after=0", "after=99999999", "after=-1", "after=x"),
            hostileNumberText.map((v) => `after=${encodeURIComponent(v)}`),
          )
          .map((q) => (q ? `once=1&${q}` : "once=1")),
        headers: fc.oneof(
          { weight: 3, arbitrary: fc.constant({}) },
          { weight: 1, arbitrary: hostileNumberText.map((v) => ({ "last-event-id": v })) },
        ),
      }),
  },
  {
    name: "GET /api/inbox/claims",
    build: (ctx) =>
      request({
        method: "GET",
        path: fc.constant("/api/inbox/claims"),
        senders: sender(VIEWER),
        query: hostileQuery({ threadId: idFrom(ctx.threadIds) }),
      }),
  },
  {
    name: "POST /api/inbox/claims",
    build: (ctx) =>
      request({
        method: "POST",
        path: fc.constant("/api/inbox/claims"),
        senders: sender(VIEWER),
        body: hostileBody(
          obj(
            {
              interruptId: idFrom(ctx.interruptIds),
              mode: fc.constantFrom("claim", "take_over", "steal"),
              assignTo: fc.constantFrom("nobody@test.local", "not-an-email", ctx.victimEmail),
            },
            ["interruptId"],
          ),
        ),
      }),
  },
  {
    name: "DELETE /api/inbox/claims/[interruptId]",
    build: (ctx) =>
      request({
        method: "DELETE",
        path: idFrom(ctx.interruptIds).map((i) => `/api/inbox/claims/${i}`),
        senders: sender(VIEWER),
      }),
  },
  {
    name: "POST /api/inbox/claims/renew",
    build: () =>
      request({ method: "POST", path: fc.constant("/api/inbox/claims/renew"), senders: sender(VIEWER) }),
  },
  {
    name: "POST /api/inbox/bulk",
    build: (ctx) =>
      request({
        method: "POST",
        path: fc.constant("/api/inbox/bulk"),
        senders: sender(VIEWER),
        // Never a bulk decision any contract accepts: a reject without its reason, or an unknown verb.
        body: hostileBody(
          obj(
            {
              interruptIds: fc.array(idFrom(ctx.interruptIds), { maxLength: 3 }),
              verb: fc.constantFrom("reject", "maybe"),
              note: fc.constantFrom("", "   "),
            },
            ["interruptIds", "verb"],
          ),
        ),
      }),
  },
  {
    name: "GET /api/search",
    build: () =>
      request({
        method: "GET",
        path: fc.constant("/api/search"),
        senders: sender(VIEWER),
        query: hostileQuery({ q: hostileString, limit }),
      }),
  },
  {
    name: "GET /api/admin/sla",
    build: () => request({ method: "GET", path: fc.constant("/api/admin/sla"), senders: sender(VIEWER) }),
  },
  {
    name: "POST /api/admin/sla",
    build: () =>
      request({
        method: "POST",
        path: fc.constant("/api/admin/sla"),
        senders: sender(VIEWER),
        // Never a policy that saves: a deadline out of range, or an expiry answer no contract takes.
        body: hostileBody(
          obj(
            {
              action: fc.constantFrom("refund_approval", "*", "nope"),
              minAmountCents: fc.constantFrom(0, -1, 1e12),
              dueSeconds: fc.constantFrom(0, -5, 1e12),
              expiryAnswer: fc.constantFrom(null, { status: "resolved", payload: { decision: "maybe" } }),
            },
            ["action", "dueSeconds"],
          ),
        ),
      }),
  },
  {
    name: "GET /api/admin/notifications",
    build: () =>
      request({ method: "GET", path: fc.constant("/api/admin/notifications"), senders: sender(VIEWER) }),
  },
  {
    name: "POST /api/admin/notifications",
    build: () =>
      request({
        method: "POST",
        path: fc.constant("/api/admin/notifications"),
        senders: sender(VIEWER),
        // Never a target that saves: a webhook that is no URL, a role that is none, an unknown event or id.
        body: hostileBody(
          fc.oneof(
            obj(
              {
                op: fc.constant("add"),
                kind: fc.constantFrom("webhook", "email", "sms"),
                target: fc.constantFrom("not a url", "javascript:alert(1)", "emperor", ""),
                events: fc.constantFrom(["overdue"], ["nope"], []),
              },
              ["op", "kind", "target", "events"],
            ),
            obj({ op: fc.constantFrom("remove", "drop"), id: hostileId }, ["op", "id"]),
          ),
        ),
      }),
  },
  ...unsupported(),
];

/** Methods a route does not export (405 from Next), and on better-auth's catch-all whatever it answers. */
function unsupported(): Target[] {
  const paths = (ctx: FuzzContext) => {
    const t = ctx.threadIds[0]!;
    const [ct, c] = ctx.checkpoints[0]!;
    return {
      get: [
        "/api/health",
        "/api/audit",
        "/api/admin/keys",
        `/api/threads/${t}`,
        `/api/threads/${t}/history`,
        `/api/threads/${t}/events`,
        `/api/threads/${ct}/checkpoints/${c}`,
        `/api/threads/${ct}/checkpoints/${c}/side-effects`,
        "/api/auth/get-session",
      ],
      post: [
        "/api/threads",
        "/api/admin/users",
        `/api/threads/${t}/runs`,
        `/api/threads/${t}/fork`,
        "/api/retention/prune",
        "/api/retention/apply",
        "/api/admin/erasure",
        `/api/admin/keys/${ctx.victimKeyIds[0]}/revoke`,
      ],
      patch: [`/api/admin/users/${ctx.victimUserIds[0]}`],
    };
  };
  const make = (name: string, method: string, pick: (p: ReturnType<typeof paths>) => string[]): Target => ({
    name,
    build: (ctx) =>
      request({
        method,
        path: fc.constantFrom(...pick(paths(ctx))),
        senders: sender(["admin", "supervisor"]),
        body: hostileBody(
          obj({
            role: ROLES,
            disabled: fc.boolean(),
            checkpointId: idFrom(ctx.checkpoints.map((x) => x[1])),
          }),
        ),
      }),
  });
  return [
    make("DELETE (any route)", "DELETE", (p) => [...p.get, ...p.post, ...p.patch]),
    make("PUT (any route)", "PUT", (p) => [...p.get, ...p.post, ...p.patch]),
    make("PATCH (routes without PATCH)", "PATCH", (p) => [...p.get, ...p.post]),
    make("POST (GET-only routes)", "POST", (p) => p.get),
  ];
}
