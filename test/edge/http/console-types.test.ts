/**
 * The console is typed against the OpenAPI document (docs/console.md): the committed
 * console/src/api/openapi.d.ts must be what the generator makes of the document the Worker serves
 * now. When a route changes, regenerate it: `npm run dev`, then `npm run console:types`.
 */
import { describe, expect, it } from "vitest";
import { call } from "../../support/api.ts";
import { openapiTypes } from "../../../console/scripts/openapi-types-gen.mjs";
import committed from "../../../console/src/api/openapi.d.ts?raw";

describe("console API types", () => {
  it("console/src/api/openapi.d.ts matches the OpenAPI document (regenerate with `npm run console:types`)", async () => {
    const res = await call("GET", "/api/openapi.json", { token: null });
    expect(res.status).toBe(200);
    const generated = openapiTypes(await res.json());
    expect(committed).toBe(generated);
    // The UI chat route is part of what the console is typed against.
    expect(generated).toContain('"/api/ui/chat": {');
  });
});
