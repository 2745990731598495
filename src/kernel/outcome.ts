/**
 * How Durable Objects answer RPC calls: a tagged result instead of a thrown error, because errors
 * crossing the RPC boundary lose their class and code. Both objects (sessions and the workspace
 * lock) use this one wire type and treat unknown errors alike: logged once with an id, answered as
 * `internal` (docs/layering.md). `unwrap` turns a failure back into the AppError it carried.
 */
import { AppError, type ErrorCode } from "./errors.ts";
import { newId } from "./ids.ts";
import { errorFields, log } from "./log.ts";

export interface WireError {
  code: ErrorCode;
  message: string;
  details?: unknown;
  retryAfter?: number;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: WireError };

export const success = <T>(value: T): Outcome<T> => ({ ok: true, value });

export const failure = (error: WireError): Outcome<never> => ({ ok: false, error });

/** An AppError as it crosses the wire (only the fields it has). */
export function toWireError(err: AppError): WireError {
  const wire: WireError = { code: err.code, message: err.message };
  if (err.details !== undefined) wire.details = err.details;
  if (err.retryAfter !== undefined) wire.retryAfter = err.retryAfter;
  return wire;
}

/** An error nobody expected: logged once with an id the answer carries, its text never sent. */
export function logUnexpected(where: string, err: unknown): WireError {
  const id = newId("err");
  log.error("unexpected error", { where, error_id: id, ...errorFields(err) });
  return { code: "internal", message: "Internal error", details: { error_id: id } };
}

/** Any thrown error as a wire error: AppErrors keep their code, anything else is `internal`. */
export function toWire(where: string, err: unknown): WireError {
  return err instanceof AppError ? toWireError(err) : logUnexpected(where, err);
}

/** Runs `fn`; any thrown error becomes a failure outcome (unknown ones logged as `internal`). */
export function attempt<T>(fn: () => T, where = "rpc"): Outcome<T> {
  try {
    return success(fn());
  } catch (err) {
    return failure(toWire(where, err));
  }
}

export async function attemptAsync<T>(fn: () => Promise<T>, where = "rpc"): Promise<Outcome<T>> {
  try {
    return success(await fn());
  } catch (err) {
    return failure(toWire(where, err));
  }
}

export function unwrap<T>(outcome: Outcome<T>): T {
  if (outcome.ok) return outcome.value;
  const { code, message, details, retryAfter } = outcome.error;
  throw new AppError(code, message, { details, retryAfter });
}
