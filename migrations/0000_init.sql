CREATE TABLE `api_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`token_hash` text NOT NULL,
	`scopes` text NOT NULL,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_tokens_token_hash_unique` ON `api_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `api_tokens_workspace_idx` ON `api_tokens` (`workspace_id`);--> statement-breakpoint
CREATE TABLE `secrets` (
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`ciphertext` text NOT NULL,
	`iv` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `name`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `workspace_configs` (
	`workspace_id` text PRIMARY KEY NOT NULL,
	`config` text NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `workspaces` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `session_events` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`seq` integer NOT NULL,
	`type` text NOT NULL,
	`run_id` text,
	`parent_id` text,
	`hidden` integer NOT NULL,
	`payload` text NOT NULL,
	`search_text` text,
	`ts` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `session_events_session_seq_idx` ON `session_events` (`session_id`,`seq`);--> statement-breakpoint
CREATE INDEX `session_events_session_run_idx` ON `session_events` (`session_id`,`run_id`);--> statement-breakpoint
CREATE INDEX `session_events_workspace_idx` ON `session_events` (`workspace_id`);--> statement-breakpoint
CREATE TABLE `session_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`status` text NOT NULL,
	`idempotency_key` text,
	`created_at` integer NOT NULL,
	`started_at` integer,
	`ended_at` integer,
	`result` text
);
--> statement-breakpoint
CREATE INDEX `session_runs_session_idx` ON `session_runs` (`session_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`title` text NOT NULL,
	`status` text NOT NULL,
	`metadata` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`last_seq` integer NOT NULL,
	`input_tokens` integer NOT NULL,
	`output_tokens` integer NOT NULL,
	`total_tokens` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sessions_workspace_updated_idx` ON `sessions` (`workspace_id`,`updated_at`);--> statement-breakpoint
CREATE TABLE `mail_task_history` (
	`id` text PRIMARY KEY NOT NULL,
	`mail_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`event` text NOT NULL,
	`from_status` text,
	`to_status` text,
	`detail` text NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `mail_task_history_mail_idx` ON `mail_task_history` (`mail_id`,`at`);--> statement-breakpoint
CREATE TABLE `mail_tasks` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`from_agent` text NOT NULL,
	`to_agent` text NOT NULL,
	`performative` text NOT NULL,
	`subject` text NOT NULL,
	`body` text NOT NULL,
	`in_reply_to` text,
	`status` text NOT NULL,
	`attempts` integer NOT NULL,
	`session_id` text,
	`run_id` text,
	`last_error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`completed_at` integer
);
--> statement-breakpoint
CREATE INDEX `mail_tasks_status_idx` ON `mail_tasks` (`workspace_id`,`status`);--> statement-breakpoint
CREATE INDEX `mail_tasks_to_idx` ON `mail_tasks` (`workspace_id`,`to_agent`);--> statement-breakpoint
CREATE INDEX `mail_tasks_reply_idx` ON `mail_tasks` (`workspace_id`,`in_reply_to`);--> statement-breakpoint
CREATE TABLE `pull_request_index` (
	`workspace_id` text NOT NULL,
	`repo` text NOT NULL,
	`number` integer NOT NULL,
	`head_sha` text NOT NULL,
	`head_ref` text NOT NULL,
	`base_ref` text NOT NULL,
	`author` text NOT NULL,
	`title` text NOT NULL,
	`state` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `repo`, `number`)
);
--> statement-breakpoint
CREATE INDEX `pull_request_index_sha_idx` ON `pull_request_index` (`workspace_id`,`repo`,`head_sha`);--> statement-breakpoint
CREATE TABLE `toolchain_agents` (
	`workspace_id` text NOT NULL,
	`id` text NOT NULL,
	`gitea_username` text NOT NULL,
	`username_key` text NOT NULL,
	`roles` text NOT NULL,
	`model` text,
	`gitea_token_secret` text,
	`enabled` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `id`)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `toolchain_agents_username_idx` ON `toolchain_agents` (`workspace_id`,`username_key`);--> statement-breakpoint
CREATE TABLE `toolchain_task_comments` (
	`id` text PRIMARY KEY NOT NULL,
	`task_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`author` text NOT NULL,
	`comment_type` text NOT NULL,
	`body` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `toolchain_task_comments_task_idx` ON `toolchain_task_comments` (`task_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `toolchain_task_history` (
	`id` text PRIMARY KEY NOT NULL,
	`task_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`event` text NOT NULL,
	`from_status` text,
	`to_status` text,
	`detail` text NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `toolchain_task_history_task_idx` ON `toolchain_task_history` (`task_id`,`at`);--> statement-breakpoint
CREATE TABLE `toolchain_task_outputs` (
	`id` text PRIMARY KEY NOT NULL,
	`task_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`type` text NOT NULL,
	`content` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `toolchain_task_outputs_task_idx` ON `toolchain_task_outputs` (`task_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `toolchain_tasks` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`delivery_id` text,
	`agent_id` text NOT NULL,
	`title` text NOT NULL,
	`description` text NOT NULL,
	`event_type` text NOT NULL,
	`action_type` text NOT NULL,
	`must_haves` text NOT NULL,
	`repo` text,
	`number` integer,
	`dedupe_key` text,
	`status` text NOT NULL,
	`attempts` integer NOT NULL,
	`business_failures` integer NOT NULL,
	`reminder_sent` integer NOT NULL,
	`not_before` integer NOT NULL,
	`deadline_at` integer,
	`session_id` text,
	`run_id` text,
	`failure_kind` text,
	`last_error` text,
	`origin_task_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`completed_at` integer
);
--> statement-breakpoint
CREATE INDEX `toolchain_tasks_status_idx` ON `toolchain_tasks` (`workspace_id`,`status`,`not_before`);--> statement-breakpoint
CREATE INDEX `toolchain_tasks_agent_idx` ON `toolchain_tasks` (`workspace_id`,`agent_id`);--> statement-breakpoint
CREATE INDEX `toolchain_tasks_repo_idx` ON `toolchain_tasks` (`workspace_id`,`repo`,`number`);--> statement-breakpoint
CREATE UNIQUE INDEX `toolchain_tasks_open_dedupe_idx` ON `toolchain_tasks` (`workspace_id`,`dedupe_key`) WHERE status IN ('pending', 'working') AND dedupe_key IS NOT NULL;--> statement-breakpoint
CREATE INDEX `toolchain_tasks_created_idx` ON `toolchain_tasks` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`workspace_id` text NOT NULL,
	`delivery_id` text NOT NULL,
	`event_type` text NOT NULL,
	`action` text,
	`repo` text,
	`outcome` text NOT NULL,
	`reason` text,
	`task_ids` text NOT NULL,
	`status_code` integer NOT NULL,
	`body_sha256` text NOT NULL,
	`received_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `delivery_id`)
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_received_idx` ON `webhook_deliveries` (`workspace_id`,`received_at`);--> statement-breakpoint
CREATE TABLE `learning_candidates` (
	`workspace_id` text NOT NULL,
	`id` text NOT NULL,
	`kind` text NOT NULL,
	`skill_name` text NOT NULL,
	`plugin_id` text,
	`status` text NOT NULL,
	`merge_mode` text,
	`evidence` text NOT NULL,
	`merge_plan` text,
	`draft_id` text,
	`superseded_by` text,
	`blocked_by_draft_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `id`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `learning_candidates_skill_idx` ON `learning_candidates` (`workspace_id`,`skill_name`);--> statement-breakpoint
CREATE TABLE `plugin_skills` (
	`workspace_id` text NOT NULL,
	`plugin_id` text NOT NULL,
	`skill_name` text NOT NULL,
	`status` text NOT NULL,
	`accepted_upstream_tree_hash` text NOT NULL,
	`observed_upstream_tree_hash` text NOT NULL,
	`accepted_beaver_version_no` integer NOT NULL,
	`pending_candidate_id` text,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `plugin_id`, `skill_name`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `plugin_sources` (
	`workspace_id` text NOT NULL,
	`id` text NOT NULL,
	`owner` text NOT NULL,
	`repo` text NOT NULL,
	`ref` text NOT NULL,
	`last_fetched_at` integer,
	`last_commit` text,
	`last_status` text,
	`last_error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `id`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `plugins` (
	`workspace_id` text NOT NULL,
	`id` text NOT NULL,
	`name` text NOT NULL,
	`description` text NOT NULL,
	`origin` text NOT NULL,
	`source_id` text,
	`manifest_kind` text NOT NULL,
	`manifest_path` text NOT NULL,
	`package_status` text NOT NULL,
	`package_errors` text NOT NULL,
	`package_warnings` text DEFAULT '[]' NOT NULL,
	`discovered_version` text,
	`discovered_skills` text NOT NULL,
	`package_digest` text NOT NULL,
	`synced_digest` text,
	`discovered_at` integer NOT NULL,
	`enabled` integer NOT NULL,
	`updates_paused` integer NOT NULL,
	`installed_version` text,
	`enabled_at` integer,
	`last_sync_at` integer,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `id`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `skill_audit` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` text NOT NULL,
	`skill_name` text NOT NULL,
	`action` text NOT NULL,
	`detail` text NOT NULL,
	`actor` text NOT NULL,
	`at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `skill_audit_skill_idx` ON `skill_audit` (`workspace_id`,`skill_name`);--> statement-breakpoint
CREATE TABLE `skill_blobs` (
	`workspace_id` text NOT NULL,
	`sha256` text NOT NULL,
	`size` integer NOT NULL,
	`created_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `sha256`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `skill_drafts` (
	`workspace_id` text NOT NULL,
	`id` text NOT NULL,
	`skill_name` text NOT NULL,
	`candidate_id` text,
	`proposal_kind` text NOT NULL,
	`tree_hash` text NOT NULL,
	`content_hash` text NOT NULL,
	`frontmatter` text NOT NULL,
	`provenance` text NOT NULL,
	`safety` text NOT NULL,
	`status` text NOT NULL,
	`published_version_no` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `id`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `skill_drafts_skill_idx` ON `skill_drafts` (`workspace_id`,`skill_name`);--> statement-breakpoint
CREATE TABLE `skill_trees` (
	`workspace_id` text NOT NULL,
	`tree_hash` text NOT NULL,
	`file_count` integer NOT NULL,
	`total_bytes` integer NOT NULL,
	`created_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `tree_hash`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `skill_versions` (
	`workspace_id` text NOT NULL,
	`skill_name` text NOT NULL,
	`version_no` integer NOT NULL,
	`tree_hash` text NOT NULL,
	`content_hash` text NOT NULL,
	`frontmatter` text NOT NULL,
	`provenance` text NOT NULL,
	`safety` text NOT NULL,
	`file_count` integer NOT NULL,
	`total_bytes` integer NOT NULL,
	`created_by` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `skill_name`, `version_no`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `skill_versions_tree_idx` ON `skill_versions` (`workspace_id`,`tree_hash`);--> statement-breakpoint
CREATE TABLE `skills` (
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`source_kind` text NOT NULL,
	`plugin_id` text,
	`status` text NOT NULL,
	`current_version_no` integer NOT NULL,
	`description` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `name`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `upstream_snapshots` (
	`workspace_id` text NOT NULL,
	`plugin_id` text NOT NULL,
	`skill_name` text NOT NULL,
	`tree_hash` text NOT NULL,
	`content_hash` text NOT NULL,
	`plugin_version` text,
	`source_path` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `plugin_id`, `skill_name`, `tree_hash`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
