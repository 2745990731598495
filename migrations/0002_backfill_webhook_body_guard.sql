-- Custom migration (drizzle-kit generate --custom): deliveries stored before 0001 guard their body too,
-- the latest one per body, so a replay of a recent delivery is refused from the first deploy
-- (docs/toolchain.md, "Webhook intake").
UPDATE `webhook_deliveries` SET `body_guard` = 1 WHERE rowid IN (SELECT rowid FROM (SELECT rowid, row_number() OVER (PARTITION BY workspace_id, body_sha256 ORDER BY received_at DESC, rowid DESC) AS rn FROM `webhook_deliveries`) WHERE rn = 1);
