/// <reference types="vite/client" />
/**
 * Webhook payloads for the toolchain tests, as the exact bytes Gitea would send: copies of real
 * payloads (`test/fixtures/upstream/gitea/webhooks/`) and our own (`test/fixtures/gitea/`).
 */
const upstream = import.meta.glob("../fixtures/upstream/gitea/webhooks/*.json", {
  query: "?raw",
  import: "default",
  eager: true,
}) as Record<string, string>;
const own = import.meta.glob("../fixtures/gitea/*.json", { query: "?raw", import: "default", eager: true }) as Record<string, string>;

function byName(files: Record<string, string>): Map<string, string> {
  return new Map(
    Object.entries(files).map(([path, text]) => [
      path
        .split("/")
        .pop()!
        .replace(/\.json$/, ""),
      text,
    ]),
  );
}

const all = new Map([...byName(upstream), ...byName(own)]);

/** The raw text of a fixture by file name without `.json`. */
export function fixture(name: string): string {
  const text = all.get(name);
  if (text === undefined) throw new Error(`No fixture '${name}' (have: ${[...all.keys()].join(", ")})`);
  return text;
}

export function fixtureJson<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(fixture(name)) as T;
}
