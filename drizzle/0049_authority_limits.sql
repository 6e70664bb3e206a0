CREATE TABLE "authority_limits" (
	"id" text PRIMARY KEY NOT NULL,
	"subject_kind" text NOT NULL,
	"subject_id" text NOT NULL,
	"agent_id" text,
	"action" text,
	"per_decision_cents" integer,
	"per_day_cents" integer,
	"set_by" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "authority_limits_scope_idx" ON "authority_limits" USING btree ("subject_kind","subject_id",coalesce("agent_id", ''),coalesce("action", ''));