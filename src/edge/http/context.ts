/** The Hono context every route shares: the Worker's bindings, who is asking, and what the middleware sets. */
import type { Env } from "../../storage/env.ts";
import type { AppError } from "../../kernel/errors.ts";
import type { ConfigAndRevisionRow } from "../../storage/config/store.ts";

/** Token scopes, widest first: admin ⊇ member ⊇ read. */
export const SCOPES = ["admin", "member", "read"] as const;
export type Scope = (typeof SCOPES)[number];

export interface Principal {
  workspaceId: string;
  /** `bootstrap` for BEAVER_ADMIN_TOKEN. */
  tokenId: string;
  scopes: Scope[];
  bootstrap: boolean;
}

export interface AppVariables {
  principal: Principal;
  /** Set by the JSON body parser when it refused a JSON body: malformed, not UTF-8, too deep, forbidden key (json-body.ts). */
  jsonBodyProblem?: AppError;
  /** The workspace's config row, read beside a run-starting request's rate limits (run-preread.ts). */
  runPreread?: Promise<ConfigAndRevisionRow | undefined>;
}

export type AppEnv = { Bindings: Env; Variables: AppVariables };
