/** The Hono context every route shares: the Worker's bindings, who is asking, and what the middleware sets. */
import type { Env } from "../../storage/env.ts";
import type { AppError } from "../../kernel/errors.ts";

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
}

export type AppEnv = { Bindings: Env; Variables: AppVariables };
