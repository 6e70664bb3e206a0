CREATE TABLE "scheduled_jobs" (
	"name" text PRIMARY KEY NOT NULL,
	"lease_holder" text,
	"lease_until" timestamp with time zone,
	"last_started_at" timestamp with time zone,
	"last_finished_at" timestamp with time zone,
	"last_holder" text,
	"last_ok" boolean,
	"last_report" jsonb,
	"last_error" text,
	"runs" integer DEFAULT 0 NOT NULL
);
