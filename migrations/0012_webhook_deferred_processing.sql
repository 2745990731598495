ALTER TABLE `webhook_deliveries` ADD `body` text;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `claim` text;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `claimed_at` integer;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_outcome_idx` ON `webhook_deliveries` (`outcome`,`received_at`);