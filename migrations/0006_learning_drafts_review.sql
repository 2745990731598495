ALTER TABLE `skill_drafts` ADD `merge_report` text;--> statement-breakpoint
ALTER TABLE `skill_drafts` ADD `confidence` real;--> statement-breakpoint
ALTER TABLE `skill_drafts` ADD `failure` text;--> statement-breakpoint
ALTER TABLE `skill_drafts` ADD `reviewed_by` text;--> statement-breakpoint
ALTER TABLE `skill_drafts` ADD `review_reason` text;--> statement-breakpoint
ALTER TABLE `skill_drafts` ADD `superseded_by` text;