/**
 * Stands in for zod's `locales/index.js` (all 50 message locales) in the deployed bundle: wrangler.toml's
 * `[alias]` maps the specifier `../locales/index.js`, which only zod's v4 entry points import (their
 * `export * as locales`; `bench/bundle.ts` fails if anything else in the bundle does). `import { z }
 * from "zod"` re-exports zod's namespace as a value, and @hono/zod-openapi hands it to
 * `extendZodWithOpenApi`, so the bundler must keep every export of it, `z.locales` with every locale
 * included: 0.25 MB minified that nothing reads. zod's messages stay English (zod configures `en`
 * itself, from `locales/en.js` directly); `z.locales.en` still works, any other locale is undefined.
 * docs/performance.md, "The bundle".
 */
export { default as en } from "zod/v4/locales/en.js";
