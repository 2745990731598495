/**
 * A drizzle client over the D1 binding, typed with the whole schema. Building one walks the whole
 * schema (drizzle's relational config), about a millisecond of CPU, so each binding gets one client
 * per isolate (docs/performance.md, "CPU per turn"); the client holds no request state.
 */
import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema.ts";

function build(d1: D1Database) {
  return drizzle(d1, { schema });
}

export type Db = ReturnType<typeof build>;

const clients = new WeakMap<D1Database, Db>();

export function makeDb(d1: D1Database): Db {
  let db = clients.get(d1);
  if (!db) {
    db = build(d1);
    clients.set(d1, db);
  }
  return db;
}

/**
 * A query built with drizzle as a D1 prepared statement, for a batch of prepared statements
 * (`env.DB.batch`) that also needs a rarely used statement the query builder already writes.
 */
export function preparedOf(d1: D1Database, query: { toSQL(): { sql: string; params: unknown[] } }): D1PreparedStatement {
  const { sql, params } = query.toSQL();
  return d1.prepare(sql).bind(...params);
}
