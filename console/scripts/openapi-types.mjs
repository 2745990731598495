// Writes console/src/api/openapi.d.ts from Beaver's OpenAPI document, so the console is typed against the
// API it talks to (docs/console.md, "Typed against the OpenAPI document"). A few dozen lines instead of a
// code generator dependency: the document uses a small subset of JSON Schema (zod 4's output).
//   node console/scripts/openapi-types.mjs [http://127.0.0.1:8787]     (a running `npm run dev`)
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { openapiTypes } from "./openapi-types-gen.mjs";

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const base = process.argv[2] ?? "http://127.0.0.1:8787";
  const doc = await (await fetch(`${base}/api/openapi.json`)).json();
  const out = fileURLToPath(new URL("../src/api/openapi.d.ts", import.meta.url));
  writeFileSync(out, openapiTypes(doc));
  console.log(`wrote ${out} (${Object.keys(doc.paths).length} paths)`);
}
