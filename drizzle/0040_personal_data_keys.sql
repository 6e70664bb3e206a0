CREATE SCHEMA "vault";
--> statement-breakpoint
CREATE TABLE "vault"."erased_subjects" (
	"subject_id" text PRIMARY KEY NOT NULL,
	"erasure_id" text NOT NULL,
	"erased_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "vault"."subject_keys" (
	"subject_id" text PRIMARY KEY NOT NULL,
	"master_key_id" text NOT NULL,
	"wrapped" "bytea" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"rewrapped_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "threads" ADD COLUMN "subject_id" text;--> statement-breakpoint
CREATE INDEX "subject_keys_master_idx" ON "vault"."subject_keys" USING btree ("master_key_id");--> statement-breakpoint
CREATE INDEX "threads_subject_idx" ON "threads" USING btree ("subject_id");