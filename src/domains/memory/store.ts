/**
 * Curated memory in D1 (docs/memory.md): reading a scope's stores, and every change — add, replace,
 * remove (by a unique substring or by id) and a whole-store put — written in one batch with its
 * audit row in `memory_changes`, so no change happens without a record of who made it. Each write
 * checks the text (safety.ts patterns), duplicates (exact or normalised) and the store's budget.
 */
import { and, asc, desc, eq, inArray, lt } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Env } from "../../storage/env.ts";
import { makeDb, type Db } from "../../storage/db/client.ts";
import { memoryChanges, memoryEntries } from "../../storage/db/schema.ts";
import { AppError } from "../../kernel/errors.ts";
import { newId } from "../../kernel/ids.ts";
import {
  assertWithinBudget,
  budgetOf,
  charCount,
  checkEntryText,
  normalizeEntry,
  scopeKey,
  shorten,
  usageLine,
  usedChars,
  type MemoryActor,
  type MemoryEntry,
  type MemoryScope,
  type MemoryStoreName,
  type StoreView,
} from "./memory.ts";

/** Entries one `put` may set (each is one D1 statement of the batch). */
export const PUT_MAX_ENTRIES = 100;

type EntryRow = typeof memoryEntries.$inferSelect;

const toEntry = (r: EntryRow): MemoryEntry => ({ id: r.id, text: r.text, created_at: r.createdAt, updated_at: r.updatedAt });

async function rowsOf(db: Db, scope: MemoryScope, store: MemoryStoreName): Promise<EntryRow[]> {
  return db
    .select()
    .from(memoryEntries)
    .where(and(eq(memoryEntries.workspaceId, scope.workspaceId), eq(memoryEntries.scope, scopeKey(scope)), eq(memoryEntries.store, store)))
    .orderBy(asc(memoryEntries.createdAt), asc(memoryEntries.id))
    .all();
}

function viewOf(
  env: Env,
  store: MemoryStoreName,
  rows: readonly { id: string; text: string; createdAt: number; updatedAt: number }[],
): StoreView {
  const used = usedChars(rows.map((r) => r.text));
  const budget = budgetOf(env, store);
  return {
    store,
    entries: rows.map((r) => ({ id: r.id, text: r.text, created_at: r.createdAt, updated_at: r.updatedAt })),
    used_chars: used,
    budget_chars: budget,
    usage: usageLine(used, budget),
  };
}

export async function viewStore(env: Env, scope: MemoryScope, store: MemoryStoreName): Promise<StoreView> {
  return viewOf(env, store, await rowsOf(makeDb(env.DB), scope, store));
}

/** Several stores of one scope in one D1 query (every run's memory snapshot reads both; docs/performance.md). */
export async function viewStores(env: Env, scope: MemoryScope, stores: readonly MemoryStoreName[]): Promise<StoreView[]> {
  const rows = await makeDb(env.DB)
    .select()
    .from(memoryEntries)
    .where(
      and(
        eq(memoryEntries.workspaceId, scope.workspaceId),
        eq(memoryEntries.scope, scopeKey(scope)),
        inArray(memoryEntries.store, [...stores]),
      ),
    )
    .orderBy(asc(memoryEntries.createdAt), asc(memoryEntries.id))
    .all();
  return stores.map((store) =>
    viewOf(
      env,
      store,
      rows.filter((r) => r.store === store),
    ),
  );
}

interface Change {
  action: "add" | "replace" | "remove" | "put";
  entryId: string | null;
  oldText: string | null;
  newText: string | null;
}

function changeRow(scope: MemoryScope, store: MemoryStoreName, actor: MemoryActor, change: Change, now: number) {
  return {
    workspaceId: scope.workspaceId,
    scope: scopeKey(scope),
    store,
    action: change.action,
    entryId: change.entryId,
    oldText: change.oldText,
    newText: change.newText,
    actorKind: actor.kind,
    actorId: actor.id,
    sessionId: actor.kind === "run" ? actor.sessionId : null,
    createdAt: now,
  };
}

/** Who changed which store, and how: the audit row every write adds to its batch. */
interface Audited {
  scope: MemoryScope;
  store: MemoryStoreName;
  actor: MemoryActor;
  change: Change;
  now: number;
}

/**
 * Runs the statements and their audit row as one batch. When the batch is refused, the data says why:
 * an entry with one of `norms` that a racing write stored in the meantime is the duplicate error
 * (the unique index refused ours); anything else is passed on.
 */
async function commit(db: Db, audited: Audited, statements: BatchItem<"sqlite">[], norms: readonly string[] = []): Promise<void> {
  const { scope, store, actor, change, now } = audited;
  try {
    await db.batch([db.insert(memoryChanges).values(changeRow(scope, store, actor, change, now)), ...statements]);
  } catch (err) {
    if (norms.length > 0) {
      const existing = new Set((await rowsOf(db, scope, store)).map((r) => r.norm));
      if (norms.some((n) => existing.has(n))) throw new AppError("conflict", "Duplicate: that entry is already remembered");
    }
    throw err;
  }
}

function assertNotDuplicate(rows: readonly EntryRow[], norm: string, exceptId?: string): void {
  const same = rows.find((r) => r.norm === norm && r.id !== exceptId);
  if (same) throw new AppError("conflict", `Duplicate: already remembered as "${shorten(same.text)}"`, { details: { entry_id: same.id } });
}

export interface WriteResult {
  entry: MemoryEntry | null;
  view: StoreView;
}

export async function addEntry(
  env: Env,
  scope: MemoryScope,
  store: MemoryStoreName,
  text: string,
  actor: MemoryActor,
): Promise<WriteResult> {
  const clean = checkEntryText(text);
  const norm = normalizeEntry(clean);
  const db = makeDb(env.DB);
  const rows = await rowsOf(db, scope, store);
  assertNotDuplicate(rows, norm);
  const used = usedChars(rows.map((r) => r.text));
  assertWithinBudget(store, used, used + charCount(clean), budgetOf(env, store));
  const now = Date.now();
  const row: EntryRow = {
    id: newId("mem"),
    workspaceId: scope.workspaceId,
    scope: scopeKey(scope),
    store,
    text: clean,
    norm,
    createdAt: now,
    updatedAt: now,
  };
  await commit(
    db,
    { scope, store, actor, change: { action: "add", entryId: row.id, oldText: null, newText: clean }, now },
    [db.insert(memoryEntries).values(row)],
    [norm],
  );
  return { entry: toEntry(row), view: viewOf(env, store, [...rows, row]) };
}

/** The one entry containing `oldText` (exactly, else ignoring case); none or several → a clear error listing them. */
function findUnique(rows: readonly EntryRow[], store: MemoryStoreName, oldText: string): EntryRow {
  const needle = oldText.trim();
  if (!needle) throw new AppError("validation_failed", "old_text cannot be empty");
  let matches = rows.filter((r) => r.text.includes(needle));
  if (matches.length === 0) matches = rows.filter((r) => r.text.toLowerCase().includes(needle.toLowerCase()));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) {
    const listed = rows.length > 0 ? ` Entries: ${rows.map((r) => `"${shorten(r.text, 60)}"`).join(", ")}.` : " The store is empty.";
    throw new AppError("not_found", `No ${store} entry contains "${shorten(needle, 60)}".${listed}`);
  }
  throw new AppError(
    "conflict",
    `"${shorten(needle, 60)}" matches ${matches.length} ${store} entries; give a longer old_text that matches one: ` +
      matches.map((r) => `"${shorten(r.text, 80)}"`).join(", "),
    { details: { matches: matches.map((r) => ({ id: r.id, text: r.text })) } },
  );
}

export async function replaceEntry(
  env: Env,
  scope: MemoryScope,
  store: MemoryStoreName,
  oldText: string,
  text: string,
  actor: MemoryActor,
): Promise<WriteResult> {
  const clean = checkEntryText(text);
  const norm = normalizeEntry(clean);
  const db = makeDb(env.DB);
  const rows = await rowsOf(db, scope, store);
  const target = findUnique(rows, store, oldText);
  assertNotDuplicate(rows, norm, target.id);
  const used = usedChars(rows.map((r) => r.text));
  assertWithinBudget(store, used, used - charCount(target.text) + charCount(clean), budgetOf(env, store));
  const now = Date.now();
  const updated: EntryRow = { ...target, text: clean, norm, updatedAt: now };
  await commit(
    db,
    { scope, store, actor, change: { action: "replace", entryId: target.id, oldText: target.text, newText: clean }, now },
    [
      db
        .update(memoryEntries)
        .set({ text: clean, norm, updatedAt: now })
        .where(and(eq(memoryEntries.workspaceId, scope.workspaceId), eq(memoryEntries.id, target.id))),
    ],
    norm === target.norm ? [] : [norm],
  );
  return {
    entry: toEntry(updated),
    view: viewOf(
      env,
      store,
      rows.map((r) => (r.id === target.id ? updated : r)),
    ),
  };
}

async function removeRow(
  env: Env,
  db: Db,
  scope: MemoryScope,
  store: MemoryStoreName,
  rows: EntryRow[],
  target: EntryRow,
  actor: MemoryActor,
): Promise<WriteResult> {
  const now = Date.now();
  await commit(db, { scope, store, actor, change: { action: "remove", entryId: target.id, oldText: target.text, newText: null }, now }, [
    db.delete(memoryEntries).where(and(eq(memoryEntries.workspaceId, scope.workspaceId), eq(memoryEntries.id, target.id))),
  ]);
  return {
    entry: toEntry(target),
    view: viewOf(
      env,
      store,
      rows.filter((r) => r.id !== target.id),
    ),
  };
}

export async function removeEntry(
  env: Env,
  scope: MemoryScope,
  store: MemoryStoreName,
  oldText: string,
  actor: MemoryActor,
): Promise<WriteResult> {
  const db = makeDb(env.DB);
  const rows = await rowsOf(db, scope, store);
  return removeRow(env, db, scope, store, rows, findUnique(rows, store, oldText), actor);
}

/** Removes the entry with `id` from the scope's store; another scope's or workspace's id is not found. */
export async function removeEntryById(
  env: Env,
  scope: MemoryScope,
  store: MemoryStoreName,
  id: string,
  actor: MemoryActor,
): Promise<WriteResult> {
  const db = makeDb(env.DB);
  const rows = await rowsOf(db, scope, store);
  const target = rows.find((r) => r.id === id);
  if (!target) throw new AppError("not_found", `Memory entry ${id} not found in ${store}`);
  return removeRow(env, db, scope, store, rows, target, actor);
}

/** Replaces a store's entries with `texts` (in order): each checked, none duplicated, all within the budget. */
export async function putStore(
  env: Env,
  scope: MemoryScope,
  store: MemoryStoreName,
  texts: readonly string[],
  actor: MemoryActor,
): Promise<StoreView> {
  if (texts.length > PUT_MAX_ENTRIES) throw new AppError("validation_failed", `A store holds at most ${PUT_MAX_ENTRIES} entries per put`);
  const seen = new Map<string, number>();
  const clean = texts.map((t, i) => {
    let text: string;
    try {
      text = checkEntryText(t);
    } catch (err) {
      if (err instanceof AppError) throw new AppError(err.code, `entries[${i}]: ${err.message}`, { details: err.details });
      throw err;
    }
    const norm = normalizeEntry(text);
    const earlier = seen.get(norm);
    if (earlier !== undefined) throw new AppError("conflict", `Duplicate: entries[${i}] repeats entries[${earlier}]`);
    seen.set(norm, i);
    return { text, norm };
  });
  const db = makeDb(env.DB);
  const rows = await rowsOf(db, scope, store);
  assertWithinBudget(store, usedChars(rows.map((r) => r.text)), usedChars(clean.map((c) => c.text)), budgetOf(env, store));
  const now = Date.now();
  // Ascending created_at keeps the given order when entries are listed.
  const next: EntryRow[] = clean.map((c, i) => ({
    id: newId("mem"),
    workspaceId: scope.workspaceId,
    scope: scopeKey(scope),
    store,
    text: c.text,
    norm: c.norm,
    createdAt: now + i,
    updatedAt: now + i,
  }));
  const where = and(
    eq(memoryEntries.workspaceId, scope.workspaceId),
    eq(memoryEntries.scope, scopeKey(scope)),
    eq(memoryEntries.store, store),
  );
  const change: Change = {
    action: "put",
    entryId: null,
    oldText: JSON.stringify(rows.map((r) => r.text)),
    newText: JSON.stringify(next.map((r) => r.text)),
  };
  await commit(
    db,
    { scope, store, actor, change, now },
    // The batch deletes the store before inserting, and `seen` refused repeats: no unique race to explain.
    [db.delete(memoryEntries).where(where), ...next.map((row) => db.insert(memoryEntries).values(row))],
  );
  return viewOf(env, store, next);
}

export interface MemoryChange {
  seq: number;
  store: MemoryStoreName;
  action: Change["action"];
  entry_id: string | null;
  old_text: string | null;
  new_text: string | null;
  actor: { kind: "token" | "run"; id: string; session_id: string | null };
  created_at: number;
}

/** The scope's changes, newest first, before `before` (a `seq`). */
export async function listChanges(env: Env, scope: MemoryScope, page: { before?: number; limit: number }): Promise<MemoryChange[]> {
  const rows = await makeDb(env.DB)
    .select()
    .from(memoryChanges)
    .where(
      and(
        eq(memoryChanges.workspaceId, scope.workspaceId),
        eq(memoryChanges.scope, scopeKey(scope)),
        page.before !== undefined ? lt(memoryChanges.seq, page.before) : undefined,
      ),
    )
    .orderBy(desc(memoryChanges.seq))
    .limit(page.limit)
    .all();
  return rows.map((r) => ({
    seq: r.seq,
    store: r.store as MemoryStoreName,
    action: r.action as Change["action"],
    entry_id: r.entryId,
    old_text: r.oldText,
    new_text: r.newText,
    actor: { kind: r.actorKind as "token" | "run", id: r.actorId, session_id: r.sessionId },
    created_at: r.createdAt,
  }));
}
