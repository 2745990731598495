/** Small shared pieces: loading data, showing errors, times, usage and JSON. */
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiError } from "./api/client";
import { onLink } from "./router";

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change (and on `reload`); keeps the last data while reloading. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({
    data: undefined,
    error: null,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    loadRef.current().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error: unknown) => live && setState((s) => ({ data: s.data, error, loading: false })),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** An action button's state: busy while it runs, its error shown next to it. */
export function useAction(): { busy: boolean; error: unknown; run: (fn: () => Promise<unknown>) => Promise<void>; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(null) };
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  if (error instanceof ApiError) {
    return (
      <div class="error" role="alert">
        <strong>{error.code}</strong> {error.message}
        {error.details !== undefined ? <pre>{JSON.stringify(error.details, null, 2)}</pre> : null}
      </div>
    );
  }
  return (
    <div class="error" role="alert">
      {error instanceof Error ? error.message : String(error)}
    </div>
  );
}

export function Loading<T>({ state, children }: { state: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (state.data === undefined) return state.error ? <ErrorNote error={state.error} /> : <p class="muted">Loading…</p>;
  return (
    <>
      <ErrorNote error={state.error} />
      {children(state.data)}
    </>
  );
}

export const Time = ({ ts }: { ts: number | null | undefined }) =>
  ts ? <time dateTime={new Date(ts).toISOString()}>{new Date(ts).toLocaleString()}</time> : <span class="muted">—</span>;

export interface UsageLike {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}
export const UsageText = ({ usage }: { usage: UsageLike | undefined | null }) =>
  usage ? (
    <span class="usage">
      {usage.input_tokens} in · {usage.output_tokens} out · {usage.total_tokens} total
    </span>
  ) : null;

/** A value as text; focusable, because a long one scrolls and a keyboard user must be able to scroll it. */
export const Json = ({ value }: { value: unknown }) => (
  <pre class="json" tabIndex={0}>
    {typeof value === "string" ? value : JSON.stringify(value, null, 2)}
  </pre>
);

export const Link = ({ href, children, class: cls }: { href: string; children: ComponentChildren; class?: string }) => (
  <a href={href} onClick={onLink} class={cls}>
    {children}
  </a>
);

export const Status = ({ value }: { value: string | null | undefined }) => (
  <span class={`status status-${value ?? "none"}`}>{value ?? "—"}</span>
);

/** The one empty state: a short sentence saying there is nothing yet and, where it helps, what to do. */
export const Empty = ({ children }: { children: ComponentChildren }) => (
  <p class="empty muted" data-testid="empty">
    {children}
  </p>
);
