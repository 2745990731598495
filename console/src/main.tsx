/**
 * The Beaver console (docs/console.md): sign in with a token, then one page per area. Preact was chosen
 * for its size (a few kB), its hooks API and because it has no runtime dependency outside the bundle.
 */
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import "./style.css";
import { api, token } from "./api/client";
import { Link, ErrorNote } from "./ui";
import { usePath } from "./router";
import { ChatPage } from "./pages/chat";
import { SkillsArea } from "./pages/skills-area";
import { ToolchainPage } from "./pages/toolchain";
import { SettingsPage } from "./pages/settings";
import { ReferencePage } from "./pages/reference";
import { MemoryPage } from "./pages/memory";
import { SchedulesPage } from "./pages/schedules";
import { MailPage } from "./pages/mail";
import { McpPage, McpOAuthCallbackPage } from "./pages/mcp";
import { UsagePage } from "./pages/usage";
import { OAuthAuthorizePage } from "./pages/oauth";

const NAV = [
  ["/chat", "Chat"],
  ["/skills", "Skills"],
  ["/toolchain", "Toolchain"],
  ["/memory", "Memory"],
  ["/schedules", "Schedules"],
  ["/mail", "Mail"],
  ["/mcp-servers", "MCP"],
  ["/usage", "Usage"],
  ["/settings", "Settings"],
  ["/reference", "API"],
] as const;

function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [value, setValue] = useState("");
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    token.set(value.trim());
    try {
      await api("get", "/api/workspaces");
      onSignedIn();
    } catch (err) {
      token.clear();
      setError(err);
    }
  };
  return (
    <main class="signin">
      <h1>Beaver</h1>
      <form onSubmit={submit}>
        <label for="token">API token</label>
        <input id="token" type="password" autoComplete="off" value={value} onInput={(e) => setValue(e.currentTarget.value)} required />
        <p class="muted">Kept in this tab's session storage only. `npm run dev` wrote an admin token to .dev.vars.</p>
        <button type="submit">Sign in</button>
        <ErrorNote error={error} />
      </form>
    </main>
  );
}

function Page({ path }: { path: string }) {
  const [, area, ...rest] = path.split("/");
  switch (area) {
    case "skills":
      return <SkillsArea rest={rest} />;
    case "plugins": // the Plugins page became a tab of Skills; old links and bookmarks land on it
      return <Redirect to={rest[0] === "drafts" && rest[1] ? `/skills/~drafts/${rest[1]}` : "/skills/~plugins"} />;
    case "toolchain":
      return <ToolchainPage taskId={rest[0] ? decodeURIComponent(rest[0]) : undefined} />;
    case "settings":
      return <SettingsPage />;
    case "reference":
      return <ReferencePage />;
    case "memory":
      return <MemoryPage />;
    case "schedules":
      return <SchedulesPage />;
    case "mail":
      return <MailPage />;
    case "mcp-servers": // not /mcp: that path is Beaver's MCP endpoint (wrangler.toml run_worker_first)
      return rest[0] === "callback" ? <McpOAuthCallbackPage /> : <McpPage />;
    case "usage":
      return <UsagePage />;
    case "oauth": // an assistant's authorization request (docs/mcp.md, "Add Beaver to your assistant")
      return rest[0] === "authorize" ? <OAuthAuthorizePage /> : <NotFound path={path} />;
    case "":
    case "chat":
      return <ChatPage sessionId={area === "chat" && rest[0] ? decodeURIComponent(rest[0]) : undefined} />;
    default:
      return <NotFound path={path} />;
  }
}

/**
 * An old address: replaced in the history (not pushed), so Back does not bounce. The event is sent on
 * the next task: on a first load this effect runs before App's, which is where usePath starts listening.
 */
function Redirect({ to }: { to: string }) {
  useEffect(() => {
    history.replaceState(null, "", to);
    const t = setTimeout(() => window.dispatchEvent(new Event("beaver:navigate")), 0);
    return () => clearTimeout(t);
  }, [to]);
  return null;
}

function NotFound({ path }: { path: string }) {
  return (
    <section class="panel page" aria-label="Not found">
      <h2>Page not found</h2>
      <p>
        There is no page at <code>{path}</code>.
      </p>
      <p>
        <Link href="/chat">Go to the chat</Link>
      </p>
    </section>
  );
}

function App() {
  const [signedIn, setSignedIn] = useState(token.get() !== null);
  const path = usePath();
  useEffect(() => {
    const out = () => {
      token.clear();
      setSignedIn(false);
    };
    window.addEventListener("beaver:unauthorized", out);
    return () => window.removeEventListener("beaver:unauthorized", out);
  }, []);
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
  const area = "/" + (path.split("/")[1] || "chat");
  const chat = area === "/chat";
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <nav aria-label="Main">
          <strong class="brand">Beaver</strong>
          {NAV.map(([href, label]) => (
            <Link key={href} href={href} class={area === href ? "active" : undefined}>
              {label}
            </Link>
          ))}
          <button
            type="button"
            class="link"
            onClick={() => {
              token.clear();
              setSignedIn(false);
            }}
          >
            Sign out
          </button>
        </nav>
      </header>
      <main id="main" class={chat ? "chat-main" : undefined}>
        <Page path={path} />
      </main>
    </>
  );
}

render(<App />, document.getElementById("app")!);
