/**
 * Archive rejections as AppErrors: undecodable or holding a bad file name (percent-encoded, `.git`,
 * a case/normalisation duplicate; check.ts) → 400, other policy problems (links, escapes, limits) → 422.
 */
import { AppError } from "../../kernel/errors.ts";
import { describeProblems, type Problem } from "../../kernel/content-tree/problems.ts";

export function archiveUnreadable(message: string): AppError {
  return new AppError("bad_request", `Archive could not be read: ${message}`);
}

export function archiveRejected(problems: Problem[], badNames = false): AppError {
  return new AppError(badNames ? "bad_request" : "unprocessable", `Archive rejected: ${describeProblems(problems)}`, {
    details: { problems },
  });
}
