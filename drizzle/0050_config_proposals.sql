CREATE TABLE "config_proposals" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"change" jsonb NOT NULL,
	"proposed_by" text NOT NULL,
	"proposed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"decided_by" text,
	"decided_at" timestamp with time zone,
	"outcome" jsonb
);
--> statement-breakpoint
CREATE INDEX "config_proposals_status_idx" ON "config_proposals" USING btree ("status","proposed_at");