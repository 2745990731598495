/** `GET /api/ping`: liveness without a token; touches no session, model or storage. */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonResponse } from "../router.ts";

export const VERSION = "0.1.0";

const route = createRoute({
  method: "get",
  path: "/",
  tags: ["meta"],
  summary: "Liveness check",
  responses: {
    200: jsonResponse(
      z.object({ status: z.literal("ok"), service: z.literal("beaver"), version: z.string(), time: z.string() }),
      "Service is up",
    ),
  },
});

export const pingRoutes = newRouter().openapi(route, (c) =>
  c.json({ status: "ok" as const, service: "beaver" as const, version: VERSION, time: new Date().toISOString() }, 200),
);
