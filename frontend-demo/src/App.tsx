import { lazy, Suspense, useEffect, useState } from "react";
import { ThreadList } from "./shared/components";
import { adoptThread, currentThread, listThreads, newThread, setCurrent } from "./shared/threads";
import { AgUiView } from "./views/AgUiView";
import { AiSdkView } from "./views/AiSdkView";
// CopilotKit is most of the page's code: it loads when its tab is first opened.
const CopilotKitView = lazy(() =>
  import("./views/CopilotKitView").then((m) => ({ default: m.CopilotKitView })));
const GalleryView = lazy(() => import("./views/GalleryView").then((m) => ({ default: m.GalleryView })));

const VIEWS = [
  { id: "ag-ui", label: "AG-UI", note: "@ag-ui/client HttpAgent: STATE_SNAPSHOT / STATE_DELTA" },
  { id: "ai-sdk", label: "AI SDK", note: "@ai-sdk/react useChat: data-state parts, resume" },
  { id: "copilotkit", label: "CopilotKit", note: "CopilotKit v2 chat + useAgent, no CopilotKit runtime" },
  { id: "gallery", label: "Gallery", note: "the seven CopilotKit features, each on an agent of pyox_agents.examples" },
] as const;
type ViewId = (typeof VIEWS)[number]["id"];

function viewFromHash(): ViewId {
  const id = location.hash.slice(1).split("/")[0];
  return (VIEWS.find((v) => v.id === id)?.id ?? "ag-ui") as ViewId;
}

/** The thread the page shows: the one the address names (`#ag-ui/<thread id>`, the link of
 * "Open in a second window"), else the view's current one. */
function threadFromHash(view: ViewId): { id: string; linked: boolean } {
  const named = location.hash.slice(1).split("/")[1];
  if (named && view !== "gallery") {
    const id = decodeURIComponent(named);
    adoptThread(view, id);
    return { id, linked: true };
  }
  return { id: currentThread(view).id, linked: false };
}

export function App() {
  const [view, setView] = useState<ViewId>(viewFromHash);
  const [thread, setThread] = useState(() => threadFromHash(viewFromHash()));
  const threadId = thread.id;
  const [, refresh] = useState(0);
  useEffect(() => {
    const onHash = () => {
      const next = viewFromHash();
      setView(next);
      setThread(threadFromHash(next));
    };
    window.addEventListener("hashchange", onHash);
    const tick = setInterval(() => refresh((n) => n + 1), 1000); // thread titles change as people type
    return () => {
      window.removeEventListener("hashchange", onHash);
      clearInterval(tick);
    };
  }, []);
  const select = (id: string) => {
    setCurrent(view, id);
    setThread({ id, linked: false });
    if (location.hash.includes("/")) history.replaceState(null, "", `#${view}`);
  };
  const Current = view === "ag-ui" ? AgUiView : view === "ai-sdk" ? AiSdkView : CopilotKitView;
  return (
    <div className="app">
      <header>
        <h1>pyox-agents demo</h1>
        <span className="muted">a todo list and a cart, shared with an agent</span>
        <nav className="tabs">
          {VIEWS.map((v) => (
            <a key={v.id} href={`#${v.id}`} className={v.id === view ? "current" : ""} title={v.note} data-testid={`tab-${v.id}`}>
              {v.label}
            </a>
          ))}
        </nav>
      </header>
      <div className="main">
        {view === "gallery" ? (
          <Suspense fallback={<p className="muted">Loading…</p>}>
            <GalleryView />
          </Suspense>
        ) : (
          <>
            <ThreadList threads={listThreads(view)} current={threadId} onSelect={select} onNew={() => select(newThread(view).id)} />
            <Suspense fallback={<p className="muted">Loading…</p>}>
              <Current key={`${view}:${threadId}`} threadId={threadId} linked={thread.linked} />
            </Suspense>
          </>
        )}
      </div>
      <footer className="muted">{VIEWS.find((v) => v.id === view)!.note}</footer>
    </div>
  );
}
