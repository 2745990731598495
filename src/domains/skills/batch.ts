/** One atomic D1 batch from a list of drizzle statements (D1 runs a batch as a single transaction). */
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../../storage/db/client.ts";

export type Statement = BatchItem<"sqlite">;

export async function runBatch(db: Db, items: Statement[]): Promise<void> {
  if (items.length === 0) return;
  await db.batch(items as [Statement, ...Statement[]]);
}
