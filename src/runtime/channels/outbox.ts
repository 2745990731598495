/**
 * Outbound channel posts (docs/channels.md, "Outbound"): a session bound to a channel posts each
 * run's result to the channel's webhook, signed, retried with jittered backoff, under the egress
 * policy. Durable: the post is a row in the SessionDO's own SQLite, written in the same transaction
 * as the run's end, and the session's Durable Object alarm delivers what is due — so a restart, a
 * deploy or an unreachable receiver never loses a post (a Queue would add a binding and a consumer
 * for what the alarm the session already has does).
 *
 * The signature is Gitea's scheme (src/domains/gitea/signature.ts): the lowercase hex HMAC-SHA256 of
 * the raw body under the channel's secret, in `X-Beaver-Signature` and, GitHub-style,
 * `X-Beaver-Signature-256: sha256=<hex>`.
 */
import type { Env } from "../../storage/env.ts";
import type { WorkspaceConfig } from "../../storage/config/schema.ts";
import type { RunResult } from "../session/contract.ts";
import { channelsOf } from "./config.ts";
import { hmacSha256Hex } from "../../kernel/hash.ts";
import { AppError } from "../../kernel/errors.ts";
import { outboundFetch } from "../../storage/outbound.ts";
import { resolveSecret } from "../../storage/secrets/store.ts";

/** The outbox table (SessionDO storage migration 7, do-storage.ts). */
export const CHANNEL_OUTBOX_SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS channel_outbox (
     id INTEGER PRIMARY KEY AUTOINCREMENT, channel TEXT NOT NULL, run_id TEXT NOT NULL, body TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0, next_at INTEGER NOT NULL, last_error TEXT)`,
  `CREATE INDEX IF NOT EXISTS channel_outbox_due ON channel_outbox(next_at)`,
];

/** A post is given up after this many failed attempts (about 2 hours of backoff), and logged. */
export const MAX_DELIVERY_ATTEMPTS = 10;
/** One post's time limit. */
export const DELIVERY_TIMEOUT_MS = 10_000;
const BASE_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 30 * 60_000;

/** The wait before attempt `failures + 1`: exponential, capped, with "equal jitter" (half fixed, half random) so receivers that come back are not hit by every session at once. */
export function deliveryBackoffMs(failures: number, random: () => number = Math.random): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** Math.max(0, failures - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** What a channel receives for one run (the body is fixed when the run ends, so every retry sends the same bytes). */
export interface ChannelPost {
  type: "run_result";
  channel: string;
  session_id: string;
  run_id: string;
  result: RunResult;
}

export interface OutboxRow {
  id: number;
  channel: string;
  run_id: string;
  body: string;
  attempts: number;
  next_at: number;
}

/** The outbox rows in the SessionDO's SQLite. Synchronous: `enqueue` runs inside the transaction that ends the run. */
export class ChannelOutbox {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  enqueue(post: ChannelPost, now: number): void {
    this.#sql.exec(
      `INSERT INTO channel_outbox (channel, run_id, body, next_at) VALUES (?, ?, ?, ?)`,
      post.channel,
      post.run_id,
      JSON.stringify(post),
      now,
    );
  }

  due(now: number, limit = 20): OutboxRow[] {
    return this.#sql
      .exec<{ id: number; channel: string; run_id: string; body: string; attempts: number; next_at: number }>(
        `SELECT id, channel, run_id, body, attempts, next_at FROM channel_outbox WHERE next_at <= ? ORDER BY next_at, id LIMIT ?`,
        now,
        limit,
      )
      .toArray();
  }

  /** When the next post is due; null when nothing waits. */
  nextAt(): number | null {
    return this.#sql.exec<{ t: number | null }>(`SELECT MIN(next_at) AS t FROM channel_outbox`).one().t;
  }

  remove(id: number): void {
    this.#sql.exec(`DELETE FROM channel_outbox WHERE id = ?`, id);
  }

  later(id: number, attempts: number, nextAt: number, error: string): void {
    this.#sql.exec(`UPDATE channel_outbox SET attempts = ?, next_at = ?, last_error = ? WHERE id = ?`, attempts, nextAt, error, id);
  }
}

export type DeliveryOutcome = { ok: true } | { ok: false; error: string; permanent: boolean };

/** Posts one row to its channel: signed, egress-checked, bounded in time. Never throws. */
export async function deliverPost(
  row: OutboxRow,
  deps: { env: Env; workspaceId: string; config: WorkspaceConfig },
): Promise<DeliveryOutcome> {
  const channel = channelsOf(deps.config).find((c) => c.name === row.channel);
  if (!channel) return { ok: false, error: `channel '${row.channel}' is no longer configured`, permanent: true };
  try {
    const secret = await resolveSecret(deps.env, deps.workspaceId, channel.secret_name);
    // The secret may yet be added: a retryable failure, not a dropped post.
    if (secret === undefined) return { ok: false, error: `secret '${channel.secret_name}' is not set`, permanent: false };
    const signature = await hmacSha256Hex(secret, row.body);
    const res = await outboundFetch(deps.env)(channel.url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "User-Agent": "Beaver-Channels/1",
        "X-Beaver-Event": "run_result",
        "X-Beaver-Delivery": `${row.run_id}:${row.channel}`,
        "X-Beaver-Delivery-Attempt": String(row.attempts + 1),
        "X-Beaver-Signature": signature,
        "X-Beaver-Signature-256": `sha256=${signature}`,
      },
      body: row.body,
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
    await res.body?.cancel();
    if (res.ok) return { ok: true };
    return { ok: false, error: `HTTP ${res.status}`, permanent: false };
  } catch (err) {
    // The egress policy refusing the URL will refuse it every time.
    if (err instanceof AppError && err.code === "egress_refused") return { ok: false, error: err.message, permanent: true };
    return { ok: false, error: err instanceof Error ? err.message : String(err), permanent: false };
  }
}
