/**
 * Finds routes that read a request body the OpenAPI document does not describe (issue 13: every
 * endpoint's request body is in the document). Routes declared with a zod body are validated from
 * their declaration, so an undocumented body can only be one a handler reads raw
 * (`c.req.arrayBuffer()`, `c.req.json()`, `c.req.parseBody()`, …). Each route that takes a method with
 * a body but documents none is called once with a body it should not read, and whether that body was
 * read is noted from the request itself (`bodyUsed`). Middleware that answers first (a 404 for the
 * made-up ids) hides a read behind it, so the probe uses ids that pass where it can (`paramValue`).
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";

const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

interface OpenApiDoc {
  paths: Record<string, Record<string, { requestBody?: unknown }>>;
}

/** `METHOD /path/{param}` of every route in `app` with a body method whose operation documents no request body and that read the body anyway. */
export async function undocumentedBodyReaders(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any app's env: the probe only routes requests through it
  app: OpenAPIHono<any>,
  env: unknown,
  opts: { token: string; paramValue: (name: string) => string },
): Promise<string[]> {
  const doc = app.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "probe", version: "0" } }) as unknown as OpenApiDoc;
  const found: string[] = [];
  const seen = new Set<string>();
  for (const route of app.routes) {
    if (!BODY_METHODS.has(route.method)) continue;
    const template = route.path.replace(/\/$/, "").replace(/:([A-Za-z_]+)/g, "{$1}");
    const key = `${route.method} ${template}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const operation = doc.paths[template]?.[route.method.toLowerCase()];
    if (operation?.requestBody) continue;
    const path = template.replace(/\{([A-Za-z_]+)\}/g, (_, name: string) => encodeURIComponent(opts.paramValue(name)));
    const body = "probe: a body no documented operation takes";
    const request = new Request(`https://beaver.test${path}`, {
      method: route.method,
      headers: { Authorization: `Bearer ${opts.token}`, "Content-Type": "application/octet-stream", "Content-Length": String(body.length) },
      body,
    });
    const ctx = createExecutionContext();
    const res = await app.fetch(request, env, ctx);
    await res.body?.cancel();
    await waitOnExecutionContext(ctx);
    if (request.bodyUsed) found.push(key);
  }
  return found.sort();
}
