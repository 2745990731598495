CREATE TABLE `run_feedback` (
	`run_id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`session_id` text NOT NULL,
	`rating` text NOT NULL,
	`comment` text,
	`given_by` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `run_receipt_skills` (
	`run_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`skill_name` text NOT NULL,
	`version` text NOT NULL,
	PRIMARY KEY(`run_id`, `skill_name`)
);
--> statement-breakpoint
CREATE INDEX `run_receipt_skills_skill_idx` ON `run_receipt_skills` (`workspace_id`,`skill_name`);--> statement-breakpoint
CREATE TABLE `run_receipts` (
	`run_id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`session_id` text NOT NULL,
	`agent_id` text,
	`status` text NOT NULL,
	`verification` text,
	`outcome` text NOT NULL,
	`body` text NOT NULL,
	`ended_at` integer NOT NULL,
	`derived_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `run_receipts_workspace_agent_idx` ON `run_receipts` (`workspace_id`,`agent_id`);--> statement-breakpoint
CREATE INDEX `run_receipts_verification_idx` ON `run_receipts` (`verification`);