-- Custom migration (drizzle-kit generate --custom): triggers that give `workspace_revisions` a new random
-- token whenever a workspace's skills, skill versions or curated memory change (docs/performance.md,
-- "Run-open reads"). A run reads the token beside its config and reuses the skill catalog and memory
-- snapshot an earlier run read under the same token; because the token is written in the same
-- statement as the change, no write path can skip it. Random rather than a counter, so a database
-- restored to an earlier state never reuses a token for different contents.
--
-- An UPDATE, then an INSERT only where there is no row: a conflict clause inside a trigger (INSERT OR
-- REPLACE, an upsert) would be overridden by the conflict policy of the statement that fired it.
CREATE TRIGGER `skills_revision_insert` AFTER INSERT ON `skills`
BEGIN
  UPDATE `workspace_revisions` SET `revision` = lower(hex(randomblob(8))) WHERE `workspace_id` = new.`workspace_id`;
  INSERT INTO `workspace_revisions` (`workspace_id`, `revision`)
    SELECT new.`workspace_id`, lower(hex(randomblob(8)))
    WHERE NOT EXISTS (SELECT 1 FROM `workspace_revisions` WHERE `workspace_id` = new.`workspace_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `skills_revision_update` AFTER UPDATE ON `skills`
BEGIN
  UPDATE `workspace_revisions` SET `revision` = lower(hex(randomblob(8))) WHERE `workspace_id` = new.`workspace_id`;
  INSERT INTO `workspace_revisions` (`workspace_id`, `revision`)
    SELECT new.`workspace_id`, lower(hex(randomblob(8)))
    WHERE NOT EXISTS (SELECT 1 FROM `workspace_revisions` WHERE `workspace_id` = new.`workspace_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `skills_revision_delete` AFTER DELETE ON `skills`
BEGIN
  UPDATE `workspace_revisions` SET `revision` = lower(hex(randomblob(8))) WHERE `workspace_id` = old.`workspace_id`;
  INSERT INTO `workspace_revisions` (`workspace_id`, `revision`)
    SELECT old.`workspace_id`, lower(hex(randomblob(8)))
    WHERE NOT EXISTS (SELECT 1 FROM `workspace_revisions` WHERE `workspace_id` = old.`workspace_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `skill_versions_revision_insert` AFTER INSERT ON `skill_versions`
BEGIN
  UPDATE `workspace_revisions` SET `revision` = lower(hex(randomblob(8))) WHERE `workspace_id` = new.`workspace_id`;
  INSERT INTO `workspace_revisions` (`workspace_id`, `revision`)
    SELECT new.`workspace_id`, lower(hex(randomblob(8)))
    WHERE NOT EXISTS (SELECT 1 FROM `workspace_revisions` WHERE `workspace_id` = new.`workspace_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `skill_versions_revision_update` AFTER UPDATE ON `skill_versions`
BEGIN
  UPDATE `workspace_revisions` SET `revision` = lower(hex(randomblob(8))) WHERE `workspace_id` = new.`workspace_id`;
  INSERT INTO `workspace_revisions` (`workspace_id`, `revision`)
    SELECT new.`workspace_id`, lower(hex(randomblob(8)))
    WHERE NOT EXISTS (SELECT 1 FROM `workspace_revisions` WHERE `workspace_id` = new.`workspace_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `skill_versions_revision_delete` AFTER DELETE ON `skill_versions`
BEGIN
  UPDATE `workspace_revisions` SET `revision` = lower(hex(randomblob(8))) WHERE `workspace_id` = old.`workspace_id`;
  INSERT INTO `workspace_revisions` (`workspace_id`, `revision`)
    SELECT old.`workspace_id`, lower(hex(randomblob(8)))
    WHERE NOT EXISTS (SELECT 1 FROM `workspace_revisions` WHERE `workspace_id` = old.`workspace_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `memory_entries_revision_insert` AFTER INSERT ON `memory_entries`
BEGIN
  UPDATE `workspace_revisions` SET `revision` = lower(hex(randomblob(8))) WHERE `workspace_id` = new.`workspace_id`;
  INSERT INTO `workspace_revisions` (`workspace_id`, `revision`)
    SELECT new.`workspace_id`, lower(hex(randomblob(8)))
    WHERE NOT EXISTS (SELECT 1 FROM `workspace_revisions` WHERE `workspace_id` = new.`workspace_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `memory_entries_revision_update` AFTER UPDATE ON `memory_entries`
BEGIN
  UPDATE `workspace_revisions` SET `revision` = lower(hex(randomblob(8))) WHERE `workspace_id` = new.`workspace_id`;
  INSERT INTO `workspace_revisions` (`workspace_id`, `revision`)
    SELECT new.`workspace_id`, lower(hex(randomblob(8)))
    WHERE NOT EXISTS (SELECT 1 FROM `workspace_revisions` WHERE `workspace_id` = new.`workspace_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `memory_entries_revision_delete` AFTER DELETE ON `memory_entries`
BEGIN
  UPDATE `workspace_revisions` SET `revision` = lower(hex(randomblob(8))) WHERE `workspace_id` = old.`workspace_id`;
  INSERT INTO `workspace_revisions` (`workspace_id`, `revision`)
    SELECT old.`workspace_id`, lower(hex(randomblob(8)))
    WHERE NOT EXISTS (SELECT 1 FROM `workspace_revisions` WHERE `workspace_id` = old.`workspace_id`);
END;
