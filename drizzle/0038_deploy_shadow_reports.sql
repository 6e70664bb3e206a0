CREATE TABLE "deploy_shadow_reports" (
	"id" text PRIMARY KEY NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"candidate" text NOT NULL,
	"baseline" text NOT NULL,
	"exit_code" integer NOT NULL,
	"summary" jsonb NOT NULL,
	"threads" jsonb NOT NULL
);
