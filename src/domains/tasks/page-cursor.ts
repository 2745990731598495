/**
 * Keyset pagination for the newest-first lists (tasks, deliveries, mail). Rows are ordered by
 * (time desc, id desc), so the cursor is the last row's time and id: a time alone skips the rows
 * written in the same millisecond as the last one of a page.
 */
import { and, eq, lt, or, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";

export interface PageCursor {
  /** Only rows older than this time… */
  before?: number;
  /** …or of this time with a smaller id. */
  beforeId?: string;
}

/** The condition for "after the cursor" in (time desc, id desc) order, or undefined on the first page. */
export function afterCursor(time: SQLiteColumn, id: SQLiteColumn, c: PageCursor): SQL | undefined {
  if (c.before === undefined) return undefined;
  if (c.beforeId === undefined) return lt(time, c.before);
  return or(lt(time, c.before), and(eq(time, c.before), lt(id, c.beforeId)));
}
