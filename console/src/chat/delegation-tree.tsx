/**
 * A session's place in a delegation tree (docs/delegation.md, "Seeing the tree"): the session that
 * delegated to it (metadata `parent_session_id`), and the sessions it delegated to
 * (`GET /api/sessions?parent_session_id=`), each one openable and unfoldable into its own children.
 */
import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { Schemas } from "../api/openapi";
import { Link, Loading, useLoad } from "../ui";

const chatHref = (id: string) => `/chat/${encodeURIComponent(id)}`;

export function DelegationTree({ session, tick }: { session: Schemas["Session"] | null | undefined; tick: number }) {
  const children = useLoad(
    () => (session ? api("get", "/api/sessions", { query: { parent_session_id: session.id, limit: 50 } }) : Promise.resolve(null)),
    [session?.id, tick],
  );
  if (!session) return null;
  const parent = typeof session.metadata.parent_session_id === "string" ? session.metadata.parent_session_id : null;
  const count = children.data?.sessions.length ?? 0;
  if (!parent && count === 0) return null;
  return (
    <nav class="delegation-tree small" aria-label="Delegation">
      {parent ? (
        <div>
          Delegated by <Link href={chatHref(parent)}>{parent}</Link>
        </div>
      ) : null}
      {count > 0 ? (
        <div>
          Delegated to:
          <Loading state={children}>{(page) => <ChildList sessions={page?.sessions ?? []} />}</Loading>
        </div>
      ) : null}
    </nav>
  );
}

type Child = Schemas["SessionListItem"];

function ChildList({ sessions }: { sessions: Child[] }) {
  return (
    <ul class="list" data-testid="delegation-children">
      {sessions.map((s) => (
        <ChildItem key={s.id} child={s} />
      ))}
    </ul>
  );
}

/** One child: a link to open it, and its own children on demand. */
function ChildItem({ child }: { child: Child }) {
  const [open, setOpen] = useState(false);
  const agent = typeof child.metadata.agent === "string" ? child.metadata.agent : null;
  return (
    <li>
      <Link href={chatHref(child.id)}>{child.title || child.id}</Link>
      {agent ? <span class="badge">{agent}</span> : null}{" "}
      <button type="button" class="small secondary" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? "Hide its delegations" : "Its delegations"}
      </button>
      {open ? <Grandchildren parentId={child.id} /> : null}
    </li>
  );
}

function Grandchildren({ parentId }: { parentId: string }) {
  const page = useLoad(() => api("get", "/api/sessions", { query: { parent_session_id: parentId, limit: 50 } }), [parentId]);
  return (
    <Loading state={page}>
      {(p) => (p.sessions.length === 0 ? <p class="muted">No delegations.</p> : <ChildList sessions={p.sessions} />)}
    </Loading>
  );
}
