// The page around the chat and the list: its title, the thread's status, a new thread, and
// the server's word when it refused the person's edit.

import type { ReactNode } from "react";
import { openNewThread } from "./thread";

type FrameProps = { running: boolean; version: number | null; refused: string | null; onDismiss: () => void; children: ReactNode };

export function Frame({ running, version, refused, onDismiss, children }: FrameProps) {
  const status = running ? "The agent is working…" : version === null ? "A new thread" : `Version ${version} of the list`;
  return (
    <>
      <header>
        <h1>__NAME__</h1>
        <span className="muted" data-testid="status">{status}</span>
        <button type="button" onClick={openNewThread}>New thread</button>
      </header>
      {refused && (
        <p className="notice" role="alert">
          {refused}
          <button type="button" onClick={onDismiss}>Dismiss</button>
        </p>
      )}
      <main>{children}</main>
    </>
  );
}
