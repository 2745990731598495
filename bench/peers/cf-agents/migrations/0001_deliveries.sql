-- The minimal webhook receiver's one table (src/index.ts `webhook`).
CREATE TABLE deliveries (id TEXT PRIMARY KEY, event TEXT NOT NULL, body TEXT NOT NULL, received_at INTEGER NOT NULL);
