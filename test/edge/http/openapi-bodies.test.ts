/**
 * Every request body a route reads is in the OpenAPI document (issue 13; test/support/openapi-bodies.ts
 * explains the probe). The probe is shown to catch a route that reads an undocumented body, then run
 * over the whole app.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { createRoute, z } from "@hono/zod-openapi";
import { createApp } from "../../../src/edge/http/app.ts";
import { newRouter, jsonBody } from "../../../src/edge/http/router.ts";
import { undocumentedBodyReaders } from "../../support/openapi-bodies.ts";
import { newWorkspace } from "../../support/api.ts";

describe("request bodies in the OpenAPI document", () => {
  it("the probe flags a route that reads a body it does not document, and passes documented and body-less ones", async () => {
    const reads = createRoute({
      method: "post",
      path: "/raw/{id}",
      request: { params: z.object({ id: z.string() }) },
      responses: { 200: { description: "ok" } },
    });
    const documented = createRoute({
      method: "post",
      path: "/typed",
      request: { body: jsonBody(z.object({ a: z.string() })) },
      responses: { 200: { description: "ok" } },
    });
    const none = createRoute({ method: "post", path: "/action", responses: { 200: { description: "ok" } } });
    const app = newRouter()
      .openapi(reads, async (c) => c.text(String((await c.req.arrayBuffer()).byteLength), 200))
      .openapi(documented, (c) => c.text("typed", 200))
      .openapi(none, (c) => c.text("none", 200));
    expect(await undocumentedBodyReaders(app, env, { token: "t", paramValue: () => "x" })).toEqual(["POST /raw/{id}"]);
  });

  it("finds no route in Beaver that reads an undocumented body", async () => {
    const ws = await newWorkspace();
    const found = await undocumentedBodyReaders(createApp(), env, {
      token: ws.admin,
      // The webhook target takes the workspace in its path; other ids are made up (those routes answer 404 first).
      paramValue: (name) => (name === "workspace_id" ? ws.id : "probe"),
    });
    expect(found).toEqual([]);
  });
});
