/**
 * How the SessionDO answers RPC calls: a tagged result instead of a thrown error, because errors
 * crossing the RPC boundary lose their class and code. `unwrap` turns a failure back into the
 * AppError the HTTP layer maps to a status.
 */
import { AppError, type ErrorCode } from "./errors.ts";

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: { code: ErrorCode; message: string; details?: unknown } };

export const success = <T>(value: T): Outcome<T> => ({ ok: true, value });

/** Runs `fn`, turning a thrown AppError into a failure outcome (other errors propagate). */
export function attempt<T>(fn: () => T): Outcome<T> {
  try {
    return success(fn());
  } catch (err) {
    if (err instanceof AppError) return failure(err);
    throw err;
  }
}

export async function attemptAsync<T>(fn: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return success(await fn());
  } catch (err) {
    if (err instanceof AppError) return failure(err);
    throw err;
  }
}

function failure(err: AppError): Outcome<never> {
  return { ok: false, error: err.details === undefined ? { code: err.code, message: err.message } : { code: err.code, message: err.message, details: err.details } };
}

export function unwrap<T>(outcome: Outcome<T>): T {
  if (outcome.ok) return outcome.value;
  throw new AppError(outcome.error.code, outcome.error.message, outcome.error.details);
}
