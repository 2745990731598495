/** One Durable Object per session: owns seq, the active leaf, the run queue and live clients. */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env.ts";

export class SessionDO extends DurableObject<Env> {}
