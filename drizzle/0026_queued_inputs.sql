CREATE TABLE "queued_inputs" (
	"id" text PRIMARY KEY NOT NULL,
	"thread_id" text NOT NULL,
	"position" bigint GENERATED ALWAYS AS IDENTITY (sequence name "queued_inputs_position_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"input" jsonb NOT NULL,
	"strategy" text NOT NULL,
	"behind_run_id" text,
	"started_by" text NOT NULL,
	"started_by_label" text,
	"status" text DEFAULT 'waiting' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "queued_inputs" ADD CONSTRAINT "queued_inputs_thread_id_threads_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."threads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "queued_inputs_waiting_idx" ON "queued_inputs" USING btree ("thread_id","position") WHERE "queued_inputs"."status" = 'waiting';