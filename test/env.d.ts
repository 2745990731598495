// Tells TypeScript that `cloudflare:workers`' env and exports in tests are the Worker's own.
import type { Env as BeaverEnv } from "../src/storage/env.ts";
import type { D1Migration } from "cloudflare:test";
import type * as mainModule from "../src/index.ts";

declare global {
  namespace Cloudflare {
    interface Env extends BeaverEnv {
      TEST_MIGRATIONS: D1Migration[];
      SINGLE_TENANT_KEY: string;
      OPERATOR_ONLY_KEY: string;
    }
    interface GlobalProps {
      mainModule: typeof mainModule;
    }
  }
}
/** Vite's `?raw` imports: a file's text (test/edge/http/console-types.test.ts). */
declare module "*?raw" {
  const text: string;
  export default text;
}

export {};
