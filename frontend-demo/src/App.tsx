import { lazy, Suspense, useCallback, useEffect, useRef, useState } from "react";
import { HistoryPanel } from "./shared/HistoryPanel";
import { ThreadList } from "./shared/ThreadList";
import {
  adoptThread, currentThread, deleteThread, fetchThreads, newThread, notStarted, onThreadsChanged, renameThread, setCurrent,
  type ThreadInfo,
} from "./shared/threads";
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
  return { id: view === "gallery" ? "" : currentThread(view), linked: false };
}

/** The view's threads (the server's and this browser's new ones), read again whenever a view
 * says a thread changed (a run started or ended), the window comes back into focus, or the
 * person renamed, deleted or forked one. */
function useThreads(view: ViewId, current: string) {
  const [threads, setThreads] = useState<ThreadInfo[]>([]);
  const [error, setError] = useState<string | null>(null);
  const asked = useRef(0);
  const refresh = useCallback(() => {
    if (view === "gallery") return;
    const n = ++asked.current; // the latest answer wins
    fetchThreads(view, current).then(
      (list) => n === asked.current && (setThreads(list), setError(null)),
      (e: Error) => n === asked.current && setError(e.message),
    );
  }, [view, current]);
  useEffect(() => {
    refresh();
    let soon: ReturnType<typeof setTimeout> | undefined;
    const later = () => { clearTimeout(soon); soon = setTimeout(refresh, 150); }; // one read for a burst
    const off = onThreadsChanged(later);
    window.addEventListener("focus", later);
    return () => {
      off();
      window.removeEventListener("focus", later);
      clearTimeout(soon);
    };
  }, [refresh]);
  return { threads, setThreads, error, setError, refresh };
}

export function App() {
  const [view, setView] = useState<ViewId>(viewFromHash);
  const [thread, setThread] = useState(() => threadFromHash(viewFromHash()));
  const threadId = thread.id;
  const list = useThreads(view, threadId);
  const [historyOpen, setHistoryOpen] = useState(false);
  const [generation, setGeneration] = useState(0); // a rewound thread is loaded again
  const [note, setNote] = useState<string | null>(null);
  useEffect(() => {
    const onHash = () => {
      const next = viewFromHash();
      setView(next);
      setThread(threadFromHash(next));
    };
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  const select = (id: string) => {
    setCurrent(view, id);
    setThread({ id, linked: false });
    setNote(null);
    if (location.hash.includes("/")) history.replaceState(null, "", `#${view}`);
  };
  const failed = (e: Error) => list.setError(e.message);
  const rename = (t: ThreadInfo, title: string) => {
    list.setThreads((all) => all.map((x) => (x.id === t.id ? { ...x, title: title || x.title } : x)));
    renameThread(view, t, title).catch(failed).finally(list.refresh);
  };
  const remove = (t: ThreadInfo) => {
    const rest = list.threads.filter((x) => x.id !== t.id);
    list.setThreads(rest);
    if (t.id === threadId) select(rest[0]?.id ?? newThread(view).id);
    deleteThread(view, t).catch(failed).finally(list.refresh);
  };
  const forked = (id: string, title: string) => {
    list.setThreads((all) => [{ id, title, created: Date.now(), onServer: true }, ...all]);
    select(id); // (the list is read again for the thread it opens)
  };
  const rewound = (done: string) => {
    setNote(done);
    setGeneration((n) => n + 1);
    list.refresh();
  };
  const shown = list.threads.find((t) => t.id === threadId);
  const Current = view === "ag-ui" ? AgUiView : view === "ai-sdk" ? AiSdkView : CopilotKitView;
  const aside = view === "gallery" ? null : (
    <HistoryPanel view={view} threadId={threadId} title={shown?.title ?? "Thread"} known={!notStarted(view, threadId)}
                  open={historyOpen} onOpen={setHistoryOpen} onForked={forked} onRewound={rewound} note={note} />
  );
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
            <ThreadList threads={list.threads} current={threadId} error={list.error} onSelect={select}
                        onNew={() => select(newThread(view).id)} onRename={rename} onDelete={remove} />
            <Suspense fallback={<p className="muted">Loading…</p>}>
              <Current key={`${view}:${threadId}:${generation}`} threadId={threadId} linked={thread.linked} aside={aside} />
            </Suspense>
          </>
        )}
      </div>
      <footer className="muted">{VIEWS.find((v) => v.id === view)!.note}</footer>
    </div>
  );
}
