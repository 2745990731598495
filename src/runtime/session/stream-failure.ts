/**
 * How the SessionDO's fetch endpoints (streams) answer a failure: the same `Outcome` wire shape as its
 * RPC methods, marked by a header, so the caller can tell it from a stream and the edge alone decides
 * the HTTP status (docs/layering.md).
 */
import { failure, type Outcome, type WireError } from "../../kernel/outcome.ts";

const FAILURE_HEADER = "X-Beaver-Outcome";

export function streamFailure(error: WireError): Response {
  return Response.json(failure(error), { status: 400, headers: { [FAILURE_HEADER]: "failure" } });
}

/** The failure a stream endpoint answered, or undefined when it answered a stream. */
export async function readStreamFailure(res: Response): Promise<Outcome<never> | undefined> {
  if (res.headers.get(FAILURE_HEADER) !== "failure") return undefined;
  return (await res.json()) as Outcome<never>;
}
