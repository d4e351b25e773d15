import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { currentThread } from "./thread";
import "./style.css";

const thread = currentThread();

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App key={thread.id} threadId={thread.id} started={thread.started} />
  </StrictMode>,
);
