CREATE TABLE "provider_events" (
	"id" text PRIMARY KEY NOT NULL,
	"provider" text NOT NULL,
	"type" text NOT NULL,
	"object_id" text,
	"outcome" text NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "provider_findings" (
	"id" text PRIMARY KEY NOT NULL,
	"finding_key" text NOT NULL,
	"provider" text NOT NULL,
	"kind" text NOT NULL,
	"provider_ref" text,
	"effect_id" text,
	"thread_id" text,
	"order_id" text,
	"ledger" jsonb,
	"provider_side" jsonb,
	"run_id" text,
	"status" text DEFAULT 'open' NOT NULL,
	"resolved_by" text,
	"resolved_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "provider_findings_finding_key_unique" UNIQUE("finding_key")
);
--> statement-breakpoint
CREATE TABLE "reconciliation_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"provider" text NOT NULL,
	"instance" text NOT NULL,
	"since" timestamp with time zone NOT NULL,
	"until" timestamp with time zone NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"outcome" text,
	"provider_count" integer DEFAULT 0 NOT NULL,
	"ledger_count" integer DEFAULT 0 NOT NULL,
	"found" integer DEFAULT 0 NOT NULL,
	"error" text
);
--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "stripe_customer" text;--> statement-breakpoint
CREATE INDEX "provider_findings_open_idx" ON "provider_findings" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "effects_provider_ref_idx" ON "effects" USING btree ("provider_ref") WHERE "effects"."provider_ref" IS NOT NULL;