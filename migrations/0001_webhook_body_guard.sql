ALTER TABLE `webhook_deliveries` ADD `body_guard` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_body_idx` ON `webhook_deliveries` (`workspace_id`,`body_sha256`) WHERE body_guard IS NOT NULL;--> statement-breakpoint
-- Added by hand to the generated file before it landed: deliveries already stored guard their body too, the latest one per body (docs/toolchain.md, "Webhook intake").
UPDATE `webhook_deliveries` SET `body_guard` = 1 WHERE rowid IN (SELECT rowid FROM (SELECT rowid, row_number() OVER (PARTITION BY workspace_id, body_sha256 ORDER BY received_at DESC, rowid DESC) AS rn FROM `webhook_deliveries`) WHERE rn = 1);
