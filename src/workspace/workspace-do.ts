/** One Durable Object per workspace: the write lock for skills, plugins and learning candidates. */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env.ts";

export class WorkspaceDO extends DurableObject<Env> {}
