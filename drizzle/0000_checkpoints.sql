CREATE TABLE "checkpoint_blobs" (
	"thread_id" text COLLATE "C" NOT NULL,
	"checkpoint_ns" text COLLATE "C" DEFAULT '' NOT NULL,
	"channel" text COLLATE "C" NOT NULL,
	"version" text COLLATE "C" NOT NULL,
	"type" text NOT NULL,
	"blob" "bytea",
	CONSTRAINT "checkpoint_blobs_thread_id_checkpoint_ns_channel_version_pk" PRIMARY KEY("thread_id","checkpoint_ns","channel","version")
);
--> statement-breakpoint
CREATE TABLE "checkpoint_writes" (
	"thread_id" text COLLATE "C" NOT NULL,
	"checkpoint_ns" text COLLATE "C" DEFAULT '' NOT NULL,
	"checkpoint_id" text COLLATE "C" NOT NULL,
	"task_id" text COLLATE "C" NOT NULL,
	"idx" integer NOT NULL,
	"channel" text COLLATE "C" NOT NULL,
	"type" text,
	"blob" "bytea" NOT NULL,
	"task_path" text COLLATE "C" DEFAULT '' NOT NULL,
	CONSTRAINT "checkpoint_writes_thread_id_checkpoint_ns_checkpoint_id_task_id_idx_pk" PRIMARY KEY("thread_id","checkpoint_ns","checkpoint_id","task_id","idx")
);
--> statement-breakpoint
CREATE TABLE "checkpoints" (
	"thread_id" text COLLATE "C" NOT NULL,
	"checkpoint_ns" text COLLATE "C" DEFAULT '' NOT NULL,
	"checkpoint_id" text COLLATE "C" NOT NULL,
	"parent_checkpoint_id" text COLLATE "C",
	"checkpoint" jsonb NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "checkpoints_thread_id_checkpoint_ns_checkpoint_id_pk" PRIMARY KEY("thread_id","checkpoint_ns","checkpoint_id")
);
--> statement-breakpoint
CREATE INDEX "checkpoints_parent_idx" ON "checkpoints" USING btree ("thread_id","checkpoint_ns","parent_checkpoint_id");