/** The Hono context every route shares: the Worker's bindings, who is asking, and what the middleware sets. */
import type { Env } from "../../storage/env.ts";

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
  /** Set by the JSON body parser when a JSON body did not parse (see json-body.ts). */
  malformedJson?: boolean;
}

export type AppEnv = { Bindings: Env; Variables: AppVariables };
