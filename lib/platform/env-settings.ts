import "server-only";
import { z } from "zod";
import { type Cidr, parseTrustedProxies } from "@/lib/platform/net/client-address";
import { MULTITASK_STRATEGIES, type MultitaskStrategy } from "../contract/wire";

/*
 * The settings of the server: each one's type, bounds, default and meaning, read by ./env.ts (the one reader of
 * `process.env`). README "Configuration" and .env.example say the same in prose.
 */

/** A boolean switch: true/false/1/0, with its default. */
const flag = (fallback: "true" | "false") =>
  z
    .enum(["true", "false", "1", "0"])
    .default(fallback)
    .transform((v) => v === "true" || v === "1");

/** Comma-separated IPs or CIDR networks (a bad entry fails the start with its name). */
/**
 * How often a job the server runs by itself runs (one instance at a time): a duration like `500ms`, `30s`, `15m`,
 * `6h`, `1d` (100 ms to 30 days), or `off` (null).
 */
const scheduleSetting = (fallback: string) =>
  z
    .string()
    .trim()
    .toLowerCase()
    .default(fallback)
    .transform((value, ctx) => {
      if (value === "off") return null;
      const m = value.match(/^(\d{1,9})(ms|s|m|h|d)$/);
      const ms = m
        ? Number(m[1]) * { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as "ms"]
        : Number.NaN;
      if (!(ms >= 100 && ms <= 30 * 86_400_000)) {
        ctx.addIssue({
          code: "custom",
          message: "a duration from 100ms to 30d (like 30s, 15m, 6h, 1d), or off",
        });
        return z.NEVER;
      }
      return ms;
    });

const cidrList = () =>
  z
    .string()
    .optional()
    .transform((value, ctx): Cidr[] => {
      try {
        return parseTrustedProxies(value);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message });
        return z.NEVER;
      }
    });

/** An optional Postgres URL (empty is unset). */
function postgresUrl() {
  return z.preprocess(
    (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
    z
      .string()
      .trim()
      .regex(/^postgres(ql)?:\/\//, "must start with postgres:// or postgresql://")
      .optional(),
  );
}

/** Every setting the server reads, with its type, bounds, default and meaning (composed by ./env.ts). */
export const envShape = {
  /** Real Postgres through `pg`. Unset: embedded PGlite under `PGLITE_DATA_DIR`. */
  DATABASE_URL: postgresUrl(),
  /**
   * How DATABASE_URL reaches Postgres: `direct` (the default), or `transaction` — through a pooler in transaction mode
   * (PgBouncer, a managed database's pooler), where a server connection serves one transaction at a time: no named
   * prepared statements, no session settings, and LISTEN goes to DATABASE_LISTEN_URL instead.
   */
  DATABASE_POOLER: z.enum(["direct", "transaction"]).default("direct"),
  /**
   * A direct connection (not through a transaction pooler) for LISTEN: the wake-ups of live streams, the live inbox
   * and session revocation. Default: DATABASE_URL. Without it behind a pooler, LISTEN is not used and everything is
   * seen by polling.
   */
  DATABASE_LISTEN_URL: postgresUrl(),
  /** Directory of the embedded database (one directory per process; a lock file guards it). */
  PGLITE_DATA_DIR: z.string().trim().min(1).default(".data/pglite"),
  /** Size of the `pg` pool. */
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(20),
  /**
   * Size of the checkpointer's own `pg` pool (Postgres): runs write their checkpoints through it, so a flood of them
   * waits for its connections, never for the ones pages, decisions and the ledger use. 0: share DATABASE_POOL_MAX's.
   */
  CHECKPOINT_POOL_MAX: z.coerce.number().int().min(0).max(200).default(10),
  /**
   * How long an idle pooled connection (Postgres) stays open. Opening one costs a backend's start, a login, cold
   * catalog caches and every statement prepared again; pg's own default (10 s) closed them between two bursts a few
   * seconds apart. The pools never keep more than they needed at once (5 min, as common Java and Go pools keep them).
   */
  DATABASE_POOL_IDLE_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(300_000),
  /**
   * The longest a request waits for the database: for a pooled connection (Postgres) or for the embedded database's
   * one connection (PGlite). Past it the request answers 503 `unavailable:database_busy`; nothing waits without bound.
   */
  DATABASE_WAIT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  /** Postgres: the longest one statement may run (`statement_timeout`); past it, 503 `unavailable:database_busy`. */
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  /**
   * Tests only: skip the start-up check of every agent version's graph against its declared structure hash (a
   * mismatching version is otherwise refused), to test the second line of defence (the resume check).
   */
  UNSAFE_SKIP_STRUCTURE_CHECK: flag("false"),
  /**
   * In production a server refuses to start while an agent version it refused (its graph is not what it declares) has
   * threads waiting on it: a careless deploy stops there, and the rollout with it. Set to serve them read-only anyway.
   */
  START_WITH_REFUSED_VERSIONS: flag("false"),
  /** Apply pending migrations when the server starts. */
  MIGRATE_ON_START: flag("true"),
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  /** With a key, the refund agent's classifier and reply writer use an OpenAI-compatible chat model. */
  OPENAI_API_KEY: z.preprocess((v) => (v === "" ? undefined : v), z.string().optional()),
  /** OpenAI-compatible endpoint (e.g. a local server); default: OpenAI's. */
  OPENAI_BASE_URL: z.preprocess((v) => (v === "" ? undefined : v), z.string().url().optional()),
  OPENAI_MODEL: z.string().trim().min(1).default("gpt-4o-mini"),
  /** Retries of a failed model call (with backoff) before the run fails with RUN_ERROR. */
  OPENAI_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  /**
   * How long one model call may take before it is abandoned (and retried, up to OPENAI_MAX_RETRIES, within the run's
   * limit); when the retries are spent the run ends `timed_out`.
   */
  MODEL_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000),
  /**
   * The longest one run may execute (wall clock, per attempt) before it is stopped and ends `timed_out`, the thread
   * at its last checkpoint ("Try again" continues it). 0: no limit.
   */
  RUN_MAX_MS: z.coerce.number().int().min(0).max(86_400_000).default(600_000),
  /**
   * Token budgets (prompt + completion, as the model reports them): a run, or a thread across all its runs, that has
   * spent this many pauses at its next model call with a `run_budget` question — an operator raises the limit for the
   * thread or stops the run. 0: no limit.
   */
  RUN_TOKEN_BUDGET: z.coerce.number().int().min(0).max(1_000_000_000).default(200_000),
  THREAD_TOKEN_BUDGET: z.coerce.number().int().min(0).max(1_000_000_000).default(1_000_000),
  /**
   * The model's price in US dollars per million tokens, `input,output` (e.g. `0.15,0.60`): with it, the console shows
   * what a run cost and the cost budgets below apply. Empty: cost unknown, no cost budget.
   */
  MODEL_PRICE_PER_MTOK: z.preprocess(
    (v) => (v === "" ? undefined : v),
    z
      .string()
      .regex(
        /^\s*\d+(\.\d+)?\s*,\s*\d+(\.\d+)?\s*$/,
        "write input,output in dollars per million tokens, e.g. 0.15,0.60",
      )
      .transform((v) => {
        const [input, output] = v.split(",").map((n) => Number(n.trim()));
        return { input: input ?? 0, output: output ?? 0 };
      })
      .optional(),
  ),
  /** Cost budgets in US dollars per run and per thread (with MODEL_PRICE_PER_MTOK). 0: no limit. */
  RUN_COST_BUDGET_USD: z.coerce.number().min(0).max(1_000_000).default(0),
  THREAD_COST_BUDGET_USD: z.coerce.number().min(0).max(1_000_000).default(0),
  /**
   * The account-change agent's cooling-off period for a new payout account (ms): after both reviews approve, the change
   * waits this long on a durable timer (cancellable) before it is made. 0: no wait. Fixed per thread when it starts.
   */
  ACCOUNT_CHANGE_COOLOFF_MS: z.coerce.number().int().min(0).max(31_622_400_000).default(0),
  /**
   * Teams (issue 33): the lowest role that sees and decides every team's threads. Below it, a user sees the threads
   * of agents no team owns and of their own teams' agents. `admin` (default) or `supervisor`.
   */
  TEAMS_SEE_ALL_ROLE: z.enum(["supervisor", "admin"]).default("admin"),
  /** Seed the demo shop's orders at start (idempotent). */
  DEMO_ORDERS: flag("true"),
  /** Pause between the offline model's streamed pieces, so a demo shows text arriving (0 in tests and benchmarks). */
  OFFLINE_TOKEN_DELAY_MS: z.coerce.number().int().min(0).max(2000).default(15),
  /** On an empty database, create a few demo tickets in different states at start (the newcomer's console). */
  DEMO_THREADS: flag("true"),
  /** How long a run's claim holds without a heartbeat before another instance may take it over. */
  RUN_LEASE_MS: z.coerce.number().int().min(500).default(30_000),
  /** How often each instance looks for runs whose lease expired. */
  RUN_SWEEP_INTERVAL_MS: z.coerce.number().int().min(100).default(5_000),
  /**
   * On SIGTERM/SIGINT: how long runs executing here may take to finish before their leases are released to the other
   * instances (then the process exits). Keep it below the orchestrator's kill timeout (Docker 10 s, Kubernetes 30 s).
   */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(8_000),
  /** Chaos tests only: pause inside the refund node after recording the refund, so a kill can land there. */
  CHAOS_REFUND_DELAY_MS: z.coerce.number().int().min(0).max(10_000).default(0),
  /**
   * Signs session cookies (at least 32 characters). Required with DATABASE_URL in production; on the embedded
   * database a random one is generated once and kept beside the data directory.
   */
  BETTER_AUTH_SECRET: z.preprocess((v) => (v === "" ? undefined : v), z.string().min(32).optional()),
  /**
   * Keys that sign decision receipts, `id:secret` pairs separated by commas (secrets of 32+ characters): the first
   * signs, all verify — rotate by putting a new key first. Unset: one key derived from the session secret.
   */
  RECEIPT_KEYS: z.preprocess((v) => (v === "" ? undefined : v), z.string().min(34).optional()),
  /**
   * The master key that wraps every data subject's key (lib/platform/data-keys.ts): `id:key`, the key 32 random bytes
   * in base64 (`openssl rand -base64 32`). Required with DATABASE_URL in production (or DATA_KEYS_FILE, or
   * KEY_SERVICE_URL); the embedded database keeps one of its own beside its data directory.
   */
  DATA_MASTER_KEY: z.preprocess((v) => (v === "" ? undefined : v), z.string().min(40).optional()),
  /** Master keys being retired (`id:key,id:key`): they still unwrap, never wrap; `npm run keys:rotate` moves off them. */
  DATA_MASTER_KEYS_RETIRED: z.preprocess((v) => (v === "" ? undefined : v), z.string().min(40).optional()),
  /** The key of the blind indexes (subject ids, search): 32 random bytes in base64. Never rotated (it names subjects). */
  DATA_INDEX_KEY: z.preprocess((v) => (v === "" ? undefined : v), z.string().min(40).optional()),
  /** A file holding both keys (`master=id:key` and `index=key` lines, 0600): instead of the two settings above. */
  DATA_KEYS_FILE: z.preprocess((v) => (v === "" ? undefined : v), z.string().trim().min(1).optional()),
  /**
   * A key service that wraps and unwraps data keys (a KMS behind a small HTTP contract, see README): when set, the
   * master key never enters this process. DATA_INDEX_KEY (or DATA_KEYS_FILE) still gives the index key.
   */
  KEY_SERVICE_URL: z.preprocess((v) => (v === "" ? undefined : v), z.string().url().optional()),
  /** The first admin, created at start when no admin exists yet (the password is hashed; nothing is logged). */
  ADMIN_EMAIL: z.preprocess((v) => (v === "" ? undefined : v), z.string().trim().email().optional()),
  ADMIN_PASSWORD: z.preprocess((v) => (v === "" ? undefined : v), z.string().min(12).max(128).optional()),
  ADMIN_NAME: z.string().trim().min(1).max(100).default("Admin"),
  /**
   * Demo operators (viewer@, operator@, supervisor@, admin@demo.local) with one random password written to
   * `.data/demo-credentials`. Default: on for the embedded database, off with DATABASE_URL.
   */
  DEMO_USERS: z
    .enum(["true", "false", "1", "0"])
    .optional()
    .transform((v) => (v === undefined ? undefined : v === "true" || v === "1")),
  /** Sign-in attempts allowed per client address per minute (then 429 until the minute is over). */
  SIGN_IN_RATE_LIMIT: z.coerce.number().int().min(1).max(10_000).default(5),
  /**
   * Failed sign-ins allowed per account (email) within SIGN_IN_ACCOUNT_WINDOW_SECONDS, from any address; then 429
   * until the oldest of them ages out. A successful sign-in starts the count again.
   */
  SIGN_IN_ACCOUNT_LIMIT: z.coerce.number().int().min(1).max(10_000).default(10),
  SIGN_IN_ACCOUNT_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  /** Password hashes (scrypt) computed at once per process; further sign-ins wait in a queue of SIGN_IN_QUEUE. */
  SIGN_IN_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  /** Sign-ins that may wait for a hash slot; beyond it they are answered 503 at once. */
  SIGN_IN_QUEUE: z.coerce.number().int().min(0).max(1_000).default(16),
  /**
   * Reverse proxies (comma-separated IPs or CIDR networks) whose X-Forwarded-For entries are believed, walking from
   * the right. Default none: the client address is the socket's peer and X-Forwarded-For is ignored.
   */
  TRUSTED_PROXIES: cidrList(),
  /** Refunds above this amount (minor units, e.g. cents) need a supervisor to approve them. */
  FOUR_EYES_MIN_CENTS: z.coerce.number().int().min(0).default(50_000),
  /** A run that crashed this many times is marked failed instead of being retried again. */
  MAX_RUN_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(5),
  /**
   * The payment provider's HTTP API (refunds are POSTed to `<PAYMENT_URL>/refunds` with an Idempotency-Key and looked
   * up by key at `<PAYMENT_URL>/refunds/by-key/<key>`). Unset: an in-process simulated provider.
   */
  PAYMENT_URL: z.preprocess(
    (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
    z
      .string()
      .trim()
      .regex(/^https?:\/\//, "must start with http:// or https://")
      .optional(),
  ),
  /**
   * Refunds through Stripe (the official SDK) instead: a secret or restricted key (`sk_…` / `rk_…`) allowed to create
   * and list refunds and read PaymentIntents. Each order's Stripe payment is `orders.payment_ref`. Set this or
   * PAYMENT_URL, not both.
   */
  STRIPE_SECRET_KEY: z.preprocess(
    (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
    z
      .string()
      .trim()
      .regex(/^(sk|rk)_[A-Za-z0-9_]+$/, "must be a Stripe secret or restricted key (sk_… or rk_…)")
      .optional(),
  ),
  /** Where the Stripe SDK sends requests. Default Stripe's own API; tests point it at a local server. */
  STRIPE_API_BASE: z.preprocess(
    (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
    z
      .string()
      .trim()
      .regex(/^https?:\/\/[^/]+\/?$/, "must be a scheme and host, e.g. https://api.stripe.com")
      .optional(),
  ),
  /**
   * The signing secret of the Stripe webhook endpoint (`whsec_…`, from Stripe's dashboard) that posts to
   * `/api/webhooks/stripe`. Unset: that route answers 404 and a refund Stripe left `pending` is settled by the daily
   * reconciliation instead.
   */
  STRIPE_WEBHOOK_SECRET: z.preprocess(
    (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
    z.string().trim().min(8, "a Stripe webhook signing secret (whsec_…)").optional(),
  ),
  /**
   * How often the server reconciles the ledger with the payment provider by itself (one instance at a time): a
   * duration like `6h` or `1d`, or `off`. Only with STRIPE_SECRET_KEY or PAYMENT_URL (the simulator has nothing to
   * compare with).
   */
  RECONCILE_SCHEDULE: scheduleSetting("1d"),
  /** How long one payment request may take before its outcome counts as unknown (looked up before a retry). */
  PAYMENT_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** Outgoing mail server, e.g. smtp://user:pass@mail.example.com:587. Unset: messages are written to MAIL_DIR. */
  SMTP_URL: z.preprocess(
    (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
    z
      .string()
      .trim()
      .regex(/^smtps?:\/\//, "must start with smtp:// or smtps://")
      .optional(),
  ),
  /**
   * With DATABASE_URL (a deployment), the server refuses to start without PAYMENT_URL unless this says payments are
   * simulated on purpose (nothing is paid; every such payment reads "Simulated"). The embedded demo simulates anyway.
   */
  PAYMENT_SIMULATED: flag("false"),
  /** The same for email: with DATABASE_URL and no SMTP_URL, refuse to start unless .eml files are meant. */
  EMAIL_SIMULATED: flag("false"),
  /** Where messages go without SMTP_URL: one .eml file per email. */
  MAIL_DIR: z.string().trim().min(1).default(".data/mail"),
  /** The sender of customer email. */
  MAIL_FROM: z.string().trim().min(3).default("Customer Service <support@example.com>"),
  /** Delivery attempts of a side effect (payment, email) before it fails and an operator task is opened. */
  EFFECT_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(8),
  /** Back-off after a failed attempt: base × 2^(attempt-1), at most the max, with full jitter. */
  EFFECT_RETRY_BASE_MS: z.coerce.number().int().min(10).default(2_000),
  EFFECT_RETRY_MAX_MS: z.coerce.number().int().min(10).default(600_000),
  /** How often each instance's dispatcher looks for due effects (an effect queued here is picked up at once). */
  EFFECT_POLL_MS: z.coerce.number().int().min(20).default(1_000),
  /**
   * How often each instance links new audit rows into the trail's hash chain (after their commit, one chainer at a
   * time across instances). `audit_log_verify()` reports a row still unchained 5 minutes after its insert.
   */
  AUDIT_CHAIN_MS: z.coerce.number().int().min(20).max(60_000).default(1_000),
  /**
   * How long a claim on a delivery holds (an effect, a notification); a claim of a dead dispatcher is taken over after
   * it.
   */
  EFFECT_LEASE_MS: z.coerce.number().int().min(500).default(60_000),
  /** Lowest level the server logs (JSON lines on stdout). `debug` adds per-step detail; never message bodies. */
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /**
   * Bearer token a Prometheus scraper sends to `/api/metrics` (at least 24 characters). Unset: only a signed-in
   * admin may read the metrics.
   */
  METRICS_TOKEN: z.preprocess((v) => (v === "" ? undefined : v), z.string().min(24).max(512).optional()),
  /**
   * OpenTelemetry collector (OTLP over HTTP, e.g. http://otel-collector:4318): traces are exported to
   * `<endpoint>/v1/traces`. Unset: spans get ids (log lines and run rows carry them) but are not recorded.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.preprocess(
    (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
    z
      .string()
      .trim()
      .regex(/^https?:\/\//, "must start with http:// or https://")
      .optional(),
  ),
  /** The service name traces carry. */
  OTEL_SERVICE_NAME: z.string().trim().min(1).max(100).default("hitl-console"),
  /** How long finished spans gather before a batch is exported (ms). */
  OTEL_BSP_SCHEDULE_DELAY: z.coerce.number().int().min(10).max(60_000).default(5_000),
  /** How often the queue is sampled for the operations page's charts (ms), and how long samples are kept (hours). */
  OPS_SAMPLE_INTERVAL_MS: z.coerce.number().int().min(500).max(3_600_000).default(60_000),
  OPS_SAMPLE_KEEP_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 90)
    .default(24 * 7),
  /** Retention policy (lib/runtime/retention/retention-policy.ts): checkpoints a finished thread keeps of its head chain… */
  RETENTION_KEEP_CHECKPOINTS: z.coerce.number().int().min(1).max(10_000).default(3),
  /** …once it has been finished this many hours. */
  RETENTION_TRUNCATE_AFTER_HOURS: z.coerce.number().min(0).max(87_600).default(24),
  /** The event log of a run is compacted this many minutes after the run ended. */
  RETENTION_COMPACT_AFTER_MINUTES: z.coerce.number().min(0).max(525_600).default(10),
  /** Finished threads idle this many days are archived to RETENTION_ARCHIVE_DIR and deleted (0 = never). */
  RETENTION_ARCHIVE_AFTER_DAYS: z.coerce.number().min(0).max(36_500).default(30),
  /** Folder the archive's JSON lines files are written to. */
  RETENTION_ARCHIVE_DIR: z.string().trim().min(1).default(".data/archive"),
  /**
   * How often the server applies the retention policy by itself (one instance at a time): a duration like `500ms`,
   * `30s`, `15m`, `6h`, `1d`, or `off` (then only `npm run prune` and the Admin page apply it).
   */
  RETENTION_SCHEDULE: scheduleSetting("1h"),
  /** How long an operator's claim on a pending decision holds without a heartbeat from an open tab. */
  CLAIM_TTL_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(60_000),
  /** How often each instance looks for overdue decisions (escalation, expiry answers) and due notifications. */
  DEADLINE_SWEEP_MS: z.coerce.number().int().min(50).default(5_000),
  /**
   * How often a stream following a run checks the event log when nothing woke it: the fallback for a run executing on
   * another instance when no NOTIFY arrives (no LISTEN connection, or a lost notification).
   */
  STREAM_POLL_MS: z.coerce.number().int().min(20).default(1_000),
  /**
   * How long an open event stream waits for an unavailable database (a failover, a pooler restart) before it gives up
   * with a RUN_ERROR `unavailable:database`; meanwhile it keeps its connection (keep-alives) and reads the log again
   * with back-off, so a stream open across a failover goes on where it was. 60 s covers a managed database's failover.
   */
  STREAM_DATABASE_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(60_000),
  /** How often a live inbox stream checks the change feed when no NOTIFY woke it (embedded database: no NOTIFY). */
  INBOX_FEED_POLL_MS: z.coerce.number().int().min(50).default(2_000),
  /**
   * Webhook targets that may resolve to a loopback, link-local, private or unspecified address (comma-separated IPs or
   * CIDR networks, e.g. `10.0.4.0/24`). Default none: such targets are refused when added and when delivered to.
   */
  WEBHOOK_ALLOW_PRIVATE: cidrList(),
  /** Attempts per notification (webhook, email) before it is marked failed. */
  NOTIFY_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(6),
  /**
   * Double texting's bound per thread: messages that may wait for their turn on one thread (enqueue, interrupt,
   * rollback); past it, 429 `rate_limited:queue_full` and nothing is written.
   */
  QUEUED_INPUTS_MAX: z.coerce.number().int().min(1).max(1_000).default(5),
  /**
   * Double texting's bound per principal: messages one person (or key) may queue per minute, across all threads; past
   * it, 429 `rate_limited:queue_rate` (with `retryAfterSeconds`) and nothing is written.
   */
  QUEUED_INPUTS_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(30),
  /**
   * Double texting: override an agent's declared strategy for new input while a run is active, as comma-separated
   * `agent=strategy` pairs (`order_support=rollback`); strategies: reject, enqueue, interrupt, rollback.
   */
  MULTITASK: z
    .string()
    .trim()
    .default("")
    .transform((value, ctx): Record<string, MultitaskStrategy> => {
      const out: Record<string, MultitaskStrategy> = {};
      for (const pair of value
        .split(",")
        .map((p) => p.trim())
        .filter(Boolean)) {
        const [agent, strategy] = pair.split("=").map((p) => p.trim());
        if (!agent || !MULTITASK_STRATEGIES.includes(strategy as MultitaskStrategy)) {
          ctx.addIssue({
            code: "custom",
            message: `"${pair}": write agent=strategy, the strategy one of ${MULTITASK_STRATEGIES.join(", ")}`,
          });
          return z.NEVER;
        }
        out[agent] = strategy as MultitaskStrategy;
      }
      return out;
    }),
};
