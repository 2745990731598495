-- Custom migration (drizzle-kit generate --custom): the workspace revision (0008) also changes with the
-- workspace's config, secrets and toolchain agents, so webhook intake can reuse the webhook secret and
-- the agent list it read under the same revision (docs/performance.md, "Webhook intake"). Same shape as
-- 0008: an UPDATE, then an INSERT only where there is no row (no conflict clause inside a trigger).
CREATE TRIGGER `workspace_configs_revision_insert` AFTER INSERT ON `workspace_configs`
BEGIN
  UPDATE `workspace_revisions` SET `revision` = lower(hex(randomblob(8))) WHERE `workspace_id` = new.`workspace_id`;
  INSERT INTO `workspace_revisions` (`workspace_id`, `revision`)
    SELECT new.`workspace_id`, lower(hex(randomblob(8)))
    WHERE NOT EXISTS (SELECT 1 FROM `workspace_revisions` WHERE `workspace_id` = new.`workspace_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `workspace_configs_revision_update` AFTER UPDATE ON `workspace_configs`
BEGIN
  UPDATE `workspace_revisions` SET `revision` = lower(hex(randomblob(8))) WHERE `workspace_id` = new.`workspace_id`;
  INSERT INTO `workspace_revisions` (`workspace_id`, `revision`)
    SELECT new.`workspace_id`, lower(hex(randomblob(8)))
    WHERE NOT EXISTS (SELECT 1 FROM `workspace_revisions` WHERE `workspace_id` = new.`workspace_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `workspace_configs_revision_delete` AFTER DELETE ON `workspace_configs`
BEGIN
  UPDATE `workspace_revisions` SET `revision` = lower(hex(randomblob(8))) WHERE `workspace_id` = old.`workspace_id`;
  INSERT INTO `workspace_revisions` (`workspace_id`, `revision`)
    SELECT old.`workspace_id`, lower(hex(randomblob(8)))
    WHERE NOT EXISTS (SELECT 1 FROM `workspace_revisions` WHERE `workspace_id` = old.`workspace_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `secrets_revision_insert` AFTER INSERT ON `secrets`
BEGIN
  UPDATE `workspace_revisions` SET `revision` = lower(hex(randomblob(8))) WHERE `workspace_id` = new.`workspace_id`;
  INSERT INTO `workspace_revisions` (`workspace_id`, `revision`)
    SELECT new.`workspace_id`, lower(hex(randomblob(8)))
    WHERE NOT EXISTS (SELECT 1 FROM `workspace_revisions` WHERE `workspace_id` = new.`workspace_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `secrets_revision_update` AFTER UPDATE ON `secrets`
BEGIN
  UPDATE `workspace_revisions` SET `revision` = lower(hex(randomblob(8))) WHERE `workspace_id` = new.`workspace_id`;
  INSERT INTO `workspace_revisions` (`workspace_id`, `revision`)
    SELECT new.`workspace_id`, lower(hex(randomblob(8)))
    WHERE NOT EXISTS (SELECT 1 FROM `workspace_revisions` WHERE `workspace_id` = new.`workspace_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `secrets_revision_delete` AFTER DELETE ON `secrets`
BEGIN
  UPDATE `workspace_revisions` SET `revision` = lower(hex(randomblob(8))) WHERE `workspace_id` = old.`workspace_id`;
  INSERT INTO `workspace_revisions` (`workspace_id`, `revision`)
    SELECT old.`workspace_id`, lower(hex(randomblob(8)))
    WHERE NOT EXISTS (SELECT 1 FROM `workspace_revisions` WHERE `workspace_id` = old.`workspace_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `toolchain_agents_revision_insert` AFTER INSERT ON `toolchain_agents`
BEGIN
  UPDATE `workspace_revisions` SET `revision` = lower(hex(randomblob(8))) WHERE `workspace_id` = new.`workspace_id`;
  INSERT INTO `workspace_revisions` (`workspace_id`, `revision`)
    SELECT new.`workspace_id`, lower(hex(randomblob(8)))
    WHERE NOT EXISTS (SELECT 1 FROM `workspace_revisions` WHERE `workspace_id` = new.`workspace_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `toolchain_agents_revision_update` AFTER UPDATE ON `toolchain_agents`
BEGIN
  UPDATE `workspace_revisions` SET `revision` = lower(hex(randomblob(8))) WHERE `workspace_id` = new.`workspace_id`;
  INSERT INTO `workspace_revisions` (`workspace_id`, `revision`)
    SELECT new.`workspace_id`, lower(hex(randomblob(8)))
    WHERE NOT EXISTS (SELECT 1 FROM `workspace_revisions` WHERE `workspace_id` = new.`workspace_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `toolchain_agents_revision_delete` AFTER DELETE ON `toolchain_agents`
BEGIN
  UPDATE `workspace_revisions` SET `revision` = lower(hex(randomblob(8))) WHERE `workspace_id` = old.`workspace_id`;
  INSERT INTO `workspace_revisions` (`workspace_id`, `revision`)
    SELECT old.`workspace_id`, lower(hex(randomblob(8)))
    WHERE NOT EXISTS (SELECT 1 FROM `workspace_revisions` WHERE `workspace_id` = old.`workspace_id`);
END;
