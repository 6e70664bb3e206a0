ALTER TABLE "runs" ADD COLUMN "tokens_in" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "tokens_out" integer DEFAULT 0 NOT NULL;