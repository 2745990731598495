CREATE TABLE `workspace_revisions` (
	`workspace_id` text PRIMARY KEY NOT NULL,
	`revision` text NOT NULL
);
