/**
 * Mail between agents (docs/toolchain.md, "Mail"): the newest messages with sender, recipient,
 * performative, subject, body and status. Its own page, and the Toolchain page's Mail tab.
 */
import { api } from "../api/client";
import { Empty, Loading, Status, Time, useLoad } from "../ui";

export function MailList() {
  const list = useLoad(
    async () => (await api("get", "/api/mail", { query: { limit: 50 } })).mail as unknown as Record<string, unknown>[],
    [],
  );
  return (
    <Loading state={list}>
      {(rows) =>
        rows.length === 0 ? (
          <Empty>No mail yet: agents send it to each other with the mail tools.</Empty>
        ) : (
          <div class="table-wrap" tabIndex={0}>
            <table>
              <thead>
                <tr>
                  <th>sent</th>
                  <th>from → to</th>
                  <th>subject</th>
                  <th>status</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((m) => (
                  <tr key={String(m.id)} data-testid="mail">
                    <td>
                      <Time ts={m.created_at as number} />
                    </td>
                    <td>
                      {String(m.from_agent)} → {String(m.to_agent)} <span class="badge">{String(m.performative)}</span>
                    </td>
                    <td>
                      <details>
                        <summary>{String(m.subject ?? "")}</summary>
                        <div class="text">{String(m.body ?? "")}</div>
                      </details>
                    </td>
                    <td>
                      <Status value={String(m.status)} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
      }
    </Loading>
  );
}

export function MailPage() {
  return (
    <section class="panel page" aria-label="Mail">
      <h2>Mail</h2>
      <MailList />
    </section>
  );
}
