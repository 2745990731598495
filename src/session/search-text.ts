/**
 * What of an event goes into the D1 full-text index: its visible text per its handler. Hidden run
 * facts and events without text (navigation, settings, extension data) give null, so the
 * replicator can skip them.
 */
import type { PersistentEvent } from "./events.ts";
import { searchableTextOf } from "./handlers.ts";

export function searchableText(event: PersistentEvent): string | null {
  return searchableTextOf(event);
}
