ALTER TABLE "runs" ADD COLUMN "agent_key" text DEFAULT 'refund@1' NOT NULL;--> statement-breakpoint
ALTER TABLE "threads" ADD COLUMN "agent_version" text DEFAULT '1' NOT NULL;