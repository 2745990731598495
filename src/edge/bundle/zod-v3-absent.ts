/**
 * Stands in for `zod/v3` and `zod-to-json-schema` in the deployed bundle (wrangler.toml `[alias]`,
 * docs/performance.md "The bundle"). The MCP SDK accepts tool schemas written with zod 3 or zod 4
 * and imports zod 3's runtime and a zod-3-to-JSON-Schema converter for the zod 3 case; Beaver's
 * schemas are all zod 4 (the `zod` dependency is 4.x and nothing imports `zod/v3`), which the SDK
 * handles with zod 4's own functions. So 80 KB were bundled and never run. Reaching one of these is a
 * zod 3 schema in our wiring, and says so rather than misbehaving.
 */
const absent = (): never => {
  throw new Error('zod 3 is not bundled: write MCP tool schemas with zod 4 (import { z } from "zod")');
};

/** zod/v3's `object`, the only zod 3 function the MCP SDK calls (server/zod-compat.js). */
export const object = absent;
/** zod-to-json-schema's converter (server/zod-json-schema-compat.js, zod 3 schemas only). */
export const zodToJsonSchema = absent;
