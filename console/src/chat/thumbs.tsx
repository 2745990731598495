/**
 * Thumbs up / down on a finished run (docs/learning.md, "Feedback"; docs/console.md, "Chat"): the
 * ratings feed the skill stats and the improvement candidates. The conversation loads the session's
 * ratings once (`GET /api/sessions/:id/feedback`) and shares them through a context, so a long chat
 * does not ask once per answer; a click posts the rating and shows it at once.
 */
import { createContext } from "preact";
import { useContext, useEffect, useState } from "preact/hooks";
import { api } from "../api/client";
import { ErrorNote, useAction, useLoad } from "../ui";

type Rating = "up" | "down";

export const RatingsContext = createContext<ReadonlyMap<string, Rating>>(new Map());

/** The session's ratings by run id; reloaded with the conversation's tick (a run ended, a rewind). */
export function useSessionRatings(sessionId: string, tick: number, exists: boolean): ReadonlyMap<string, Rating> {
  const loaded = useLoad(async () => {
    if (!exists) return [];
    return (await api("get", "/api/sessions/{id}/feedback", { params: { id: sessionId } })).feedback;
  }, [sessionId, tick, exists]);
  return new Map((loaded.data ?? []).map((f) => [f.run_id, f.rating]));
}

export function Thumbs({ sessionId, runId }: { sessionId: string; runId: string }) {
  const stored = useContext(RatingsContext).get(runId) ?? null;
  const [rating, setRating] = useState<Rating | null>(stored);
  useEffect(() => setRating(stored), [stored]);
  const action = useAction();
  const rate = (value: Rating) =>
    action.run(async () => {
      const out = await api("post", "/api/sessions/{id}/runs/{run_id}/feedback", {
        params: { id: sessionId, run_id: runId },
        body: { rating: value },
      });
      setRating(out.rating);
    });
  return (
    <span class="thumbs" role="group" aria-label="Rate this answer" data-testid="thumbs" data-rating={rating ?? ""}>
      <button
        type="button"
        class={`small link ${rating === "up" ? "active" : ""}`}
        aria-pressed={rating === "up"}
        aria-label="Good answer"
        disabled={action.busy}
        onClick={() => void rate("up")}
      >
        👍
      </button>
      <button
        type="button"
        class={`small link ${rating === "down" ? "active" : ""}`}
        aria-pressed={rating === "down"}
        aria-label="Bad answer"
        disabled={action.busy}
        onClick={() => void rate("down")}
      >
        👎
      </button>
      <ErrorNote error={action.error} />
    </span>
  );
}
