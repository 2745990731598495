/**
 * The agents the toolchain tests route to: Gitea users of the shared and written payloads
 * (jony authors PR 7, a_nice_user reviews it, gordon authors gordon/hello-world#1), an infra agent
 * and a supervisor.
 */
import type { Agent } from "../../src/domains/tasks/agents.ts";

const agent = (id: string, giteaUsername: string, roles: Agent["roles"], extra: Partial<Agent> = {}): Agent => ({
  id,
  giteaUsername,
  roles,
  model: null,
  giteaTokenSecret: null,
  enabled: true,
  createdAt: 0,
  updatedAt: 0,
  ...extra,
});

export const CAST: Agent[] = [
  agent("jony", "jony", ["developer"]),
  agent("nice", "a_nice_user", ["reviewer"]),
  agent("gordon", "gordon", ["developer", "reviewer"]),
  agent("ops", "infra-bot", ["infra"]),
  agent("boss", "boss", ["supervisor"]),
];

/** The same cast as `POST /api/agents` bodies. */
export const CAST_BODIES = CAST.map((a) => ({ id: a.id, gitea_username: a.giteaUsername, roles: a.roles }));

export const byId = (id: string) => CAST.find((a) => a.id === id)!;
