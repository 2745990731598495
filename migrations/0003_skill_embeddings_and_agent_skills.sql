CREATE TABLE `skill_embeddings` (
	`workspace_id` text NOT NULL,
	`model` text NOT NULL,
	`content_hash` text NOT NULL,
	`vector` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `model`, `content_hash`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
ALTER TABLE `toolchain_agents` ADD `skills` text;