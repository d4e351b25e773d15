// The gallery: the seven features CopilotKit users build with (the AG-UI dojo's list), one page
// each, every page a CopilotKit v2 app on one of `pyox_agents.examples`' agents. A page loads
// when it is first opened; its address is #gallery/<page>.

import { lazy, Suspense, useEffect, useState } from "react";

export const PAGES = [
  { id: "agentic-chat", label: "Agentic chat", load: () => import("./gallery/AgenticChat") },
  { id: "backend-tool-rendering", label: "Backend tool rendering", load: () => import("./gallery/BackendToolRendering") },
  { id: "human-in-the-loop", label: "Human in the loop", load: () => import("./gallery/HumanInTheLoop") },
  { id: "agentic-generative-ui", label: "Agentic generative UI", load: () => import("./gallery/AgenticGenerativeUI") },
  { id: "tool-based-generative-ui", label: "Tool-based generative UI", load: () => import("./gallery/ToolBasedGenerativeUI") },
  { id: "shared-state", label: "Shared state", load: () => import("./gallery/SharedState") },
  { id: "predictive-state-updates", label: "Predictive state updates", load: () => import("./gallery/PredictiveState") },
] as const;

const COMPONENTS = Object.fromEntries(PAGES.map((p) => [p.id, lazy(p.load)]));

function pageFromHash(): string {
  const id = location.hash.slice(1).split("/")[1];
  return PAGES.find((p) => p.id === id)?.id ?? PAGES[0].id;
}

export function GalleryView() {
  const [page, setPage] = useState(pageFromHash);
  useEffect(() => {
    const onHash = () => setPage(pageFromHash());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  const Page = COMPONENTS[page];
  return (
    <div className="gallery">
      <nav className="gallery-nav" data-testid="gallery-nav">
        {PAGES.map((p, i) => (
          <a key={p.id} href={`#gallery/${p.id}`} className={p.id === page ? "current" : ""}>
            <span className="gallery-n">{i + 1}</span> {p.label}
          </a>
        ))}
      </nav>
      <div className="view" data-testid={`page-${page}`}>
        <Suspense fallback={<p className="muted">Loading…</p>}>
          <Page key={page} />
        </Suspense>
      </div>
    </div>
  );
}
