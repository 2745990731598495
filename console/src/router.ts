/** A tiny path router over history.pushState: the Worker's assets answer every page path with index.html. */
import { useEffect, useState } from "preact/hooks";

export function navigate(path: string): void {
  if (location.pathname + location.search === path) return;
  history.pushState(null, "", path);
  window.dispatchEvent(new Event("beaver:navigate"));
}

export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    window.addEventListener("popstate", update);
    window.addEventListener("beaver:navigate", update);
    return () => {
      window.removeEventListener("popstate", update);
      window.removeEventListener("beaver:navigate", update);
    };
  }, []);
  return path;
}

/** Internal links: a real <a href> (keyboard, middle click) that navigates without a reload. */
export function onLink(e: MouseEvent): void {
  const a = (e.currentTarget as HTMLAnchorElement | null) ?? null;
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
  e.preventDefault();
  navigate(a.getAttribute("href") ?? "/");
}
