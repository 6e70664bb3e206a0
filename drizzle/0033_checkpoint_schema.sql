CREATE SCHEMA "checkpoint";
--> statement-breakpoint
ALTER TABLE "public"."checkpoint_blobs" SET SCHEMA "checkpoint";
--> statement-breakpoint
ALTER TABLE "public"."checkpoint_writes" SET SCHEMA "checkpoint";
--> statement-breakpoint
ALTER TABLE "public"."checkpoints" SET SCHEMA "checkpoint";
--> statement-breakpoint
-- The previous release's servers keep running during a rolling deploy and name these tables unqualified. A view of
-- each old name in public keeps them working (simple views are updatable, ON CONFLICT included) until they are gone;
-- the release after this one drops the views (docs/scaling.md, "Checkpoints in a schema of their own").
CREATE VIEW "public"."checkpoints" AS SELECT * FROM "checkpoint"."checkpoints";
--> statement-breakpoint
CREATE VIEW "public"."checkpoint_blobs" AS SELECT * FROM "checkpoint"."checkpoint_blobs";
--> statement-breakpoint
CREATE VIEW "public"."checkpoint_writes" AS SELECT * FROM "checkpoint"."checkpoint_writes";
