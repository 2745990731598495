/**
 * `SessionClient`'s results are the SessionDO's own RPC result types, unwrapped from their `Outcome`
 * (src/runtime/session/client.ts, `SessionResult`), and not what a raw stub's `Serializable` mapping
 * makes of them (fields typed `unknown` become `never` there). The `expectTypeOf` lines are checked by
 * `npm run typecheck`: a client method that answered another type would fail it. The runtime lines
 * check that the client refuses a malformed session id before it reaches any object.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { SessionClient, type SessionResult } from "../../../src/runtime/index.ts";
import type { SessionObject } from "../../../src/runtime/session/session-object.ts";
import type {
  PersistentEvent,
  RunResult,
  RunView,
  SessionView,
  SubmitOutcome,
  StreamFrame,
  FrameReader,
} from "../../../src/runtime/index.ts";
import type { Outcome } from "../../../src/kernel/outcome.ts";
import { AppError } from "../../../src/kernel/errors.ts";
import type { Env } from "../../../src/storage/env.ts";

// No binding is reached: a malformed id is refused before the namespace is asked for a stub.
const env = {} as Env;

type Client = SessionClient;

describe("SessionClient's types", () => {
  it("answers the DO's RPC result types, unwrapped from their Outcome", () => {
    // What the DO's methods answer…
    expectTypeOf<ReturnType<SessionObject["view"]>>().toEqualTypeOf<Outcome<SessionView>>();
    expectTypeOf<Awaited<ReturnType<SessionObject["waitForRun"]>>>().toEqualTypeOf<Outcome<RunResult>>();
    // …is what a caller of the client gets.
    expectTypeOf<SessionResult<"view">>().toEqualTypeOf<SessionView>();
    expectTypeOf<Client["view"]>().returns.resolves.toEqualTypeOf<SessionView>();
    expectTypeOf<Client["getRun"]>().returns.resolves.toEqualTypeOf<RunView>();
    expectTypeOf<Client["listRuns"]>().returns.resolves.toEqualTypeOf<RunView[]>();
    expectTypeOf<Client["submit"]>().returns.resolves.toEqualTypeOf<SubmitOutcome>();
    expectTypeOf<Client["waitForRun"]>().returns.resolves.toEqualTypeOf<RunResult>();
    expectTypeOf<Client["submitAndWait"]>().returns.resolves.toEqualTypeOf<{ submitted: SubmitOutcome; result: RunResult }>();
    expectTypeOf<Client["useTicket"]>().returns.resolves.toEqualTypeOf<boolean>();
    // Events keep their `unknown` fields (tool args, metadata): a raw stub would have mapped them to `never`.
    expectTypeOf<Client["events"]>().returns.resolves.toEqualTypeOf<PersistentEvent[]>();
    expectTypeOf<SessionResult<"create">["session"]["metadata"]>().toEqualTypeOf<Record<string, unknown>>();
    // Streams hand back typed frames, not bytes.
    expectTypeOf<Awaited<ReturnType<Client["submitFrames"]>>["frames"]>().toEqualTypeOf<FrameReader>();
    expectTypeOf<Awaited<ReturnType<FrameReader["next"]>>>().toEqualTypeOf<StreamFrame | null>();
    expectTypeOf<Client["openLiveStream"]>().returns.resolves.toEqualTypeOf<Response>();
  });

  it("refuses a malformed session id as not found", () => {
    expect(() => SessionClient.of(env, "no spaces/here")).toThrow(AppError);
    expect(() => SessionClient.of(env, "no spaces/here")).toThrow("Session not found");
  });
});
