ALTER TABLE "runs" ADD COLUMN "started_by" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "started_by_label" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "edited_state" boolean DEFAULT false NOT NULL;