CREATE TABLE `memory_changes` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` text NOT NULL,
	`scope` text NOT NULL,
	`store` text NOT NULL,
	`action` text NOT NULL,
	`entry_id` text,
	`old_text` text,
	`new_text` text,
	`actor_kind` text NOT NULL,
	`actor_id` text NOT NULL,
	`session_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `memory_changes_scope_idx` ON `memory_changes` (`workspace_id`,`scope`,`seq`);--> statement-breakpoint
CREATE TABLE `memory_entries` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`scope` text NOT NULL,
	`store` text NOT NULL,
	`text` text NOT NULL,
	`norm` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `memory_entries_scope_idx` ON `memory_entries` (`workspace_id`,`scope`,`store`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `memory_entries_norm_uq` ON `memory_entries` (`workspace_id`,`scope`,`store`,`norm`);