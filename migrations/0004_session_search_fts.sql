-- Custom migration (drizzle-kit generate --custom): the full-text index of session search
-- (docs/sessions.md, "Search"). FTS5 virtual tables and triggers cannot be expressed in drizzle's schema.
--
-- The index holds its own copy of each indexed event's text (snippets need the text) plus the event id
-- (UNINDEXED: stored, never matched) to join back to `session_events` by primary key. It is fed by a
-- trigger on `session_events`, so an event row and its index row are written by the same statement of
-- the replicator's batch. A retried batch inserts with ON CONFLICT DO NOTHING: no row is inserted, the
-- trigger does not fire, the index never gets a duplicate. Hidden run facts and events without
-- searchable text are never indexed.
CREATE VIRTUAL TABLE `session_search_fts` USING fts5(`text`, `event_id` UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2');
--> statement-breakpoint
CREATE TRIGGER `session_events_search_insert` AFTER INSERT ON `session_events`
WHEN new.`search_text` IS NOT NULL AND new.`hidden` = 0
BEGIN
  INSERT INTO `session_search_fts` (rowid, `text`, `event_id`) VALUES (new.rowid, new.`search_text`, new.`id`);
END;
--> statement-breakpoint
-- Nothing deletes events today; if something does, its index row goes too (the event id guards against a
-- rowid reassigned since).
CREATE TRIGGER `session_events_search_delete` AFTER DELETE ON `session_events`
BEGIN
  DELETE FROM `session_search_fts` WHERE rowid = old.rowid AND `event_id` = old.`id`;
END;
--> statement-breakpoint
-- Backfill: every visible event with text replicated before this migration, except tool results (their
-- output is not indexed any more: docs/sessions.md, "Search").
INSERT INTO `session_search_fts` (rowid, `text`, `event_id`)
SELECT rowid, `search_text`, `id` FROM `session_events`
WHERE `search_text` IS NOT NULL AND `hidden` = 0
  AND NOT (`type` = 'message' AND json_extract(`payload`, '$.message.role') = 'tool_result');
--> statement-breakpoint
UPDATE `session_events` SET `search_text` = NULL
WHERE `type` = 'message' AND `search_text` IS NOT NULL AND json_extract(`payload`, '$.message.role') = 'tool_result';
