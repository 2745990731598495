/**
 * Versioned schema for a Durable Object's own SQLite storage. A Durable Object keeps its data across
 * deploys, so an object written by older code wakes up under newer code: each object records the
 * schema version it is at, and on wake runs the migrations above it, in order, each exactly once.
 * Shared by SessionDO and WorkspaceDO; it only needs the storage's `sql` and `transactionSync`, so
 * tests can drive it with their own migration lists against a real object's storage.
 */

export interface Migration {
  /** 1, 2, 3, … in list order; the object records the last one applied. */
  version: number;
  name: string;
  /** Synchronous (DO SQLite is local); it runs inside one transaction with the version update. */
  up(sql: SqlStorage): void;
}

/** What the runner needs from `ctx.storage` (a SQLite-backed `DurableObjectStorage` has both). */
export type MigratableStorage = Pick<DurableObjectStorage, "sql" | "transactionSync">;

/** Named with a leading underscore so it cannot collide with an object's own tables (the SessionDO has a `meta`). */
const SCHEMA_TABLE = "_schema";

/** The version recorded in the object; 0 for an object written before versioning (or a new one). */
export function schemaVersion(sql: SqlStorage): number {
  // One row at most (the CHECK in `ensureTable`); an absent table or row both mean "never versioned".
  const exists = sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`, SCHEMA_TABLE).toArray().length > 0;
  if (!exists) return 0;
  const row = sql.exec<{ version: number }>(`SELECT version FROM ${SCHEMA_TABLE} WHERE id = 1`).toArray()[0];
  return row?.version ?? 0;
}

/**
 * Brings the object's storage up to the last migration of `migrations` and returns the version it
 * is at afterwards. Each pending migration runs in its own transaction together with the version
 * bump, so a migration that throws leaves neither its changes nor a new version behind; the error
 * propagates, and since callers run this in their constructor, the object then refuses to serve
 * rather than run new code against an old layout. The next wake tries again.
 */
export function migrate(storage: MigratableStorage, migrations: readonly Migration[]): number {
  checkOrder(migrations);
  const { sql } = storage;
  sql.exec(`CREATE TABLE IF NOT EXISTS ${SCHEMA_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)`);
  let current = schemaVersion(sql);
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    storage.transactionSync(() => {
      migration.up(sql);
      sql.exec(
        `INSERT INTO ${SCHEMA_TABLE} (id, version) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET version = excluded.version`,
        migration.version,
      );
    });
    current = migration.version;
  }
  // A version above the list means newer code ran here and was rolled back. Migrations are meant to
  // be additive, so the older code carries on rather than make the object unusable; the version is
  // left as it is so the newer code does not run its migrations twice when it comes back.
  return current;
}

/** A misnumbered list is a programming error; failing loudly beats skipping or repeating a migration. */
function checkOrder(migrations: readonly Migration[]): void {
  migrations.forEach((m, i) => {
    if (!Number.isInteger(m.version) || m.version !== i + 1) {
      throw new Error(`DO migrations must be numbered 1, 2, 3, … in order; found ${m.version} (${m.name}) at position ${i + 1}`);
    }
  });
}
