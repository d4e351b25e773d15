// Streamdown's code block without Shiki: the code as plain preformatted text.
import type { ReactNode } from "react";

type Props = { code?: string; language?: string; className?: string; children?: ReactNode };

export function CodeBlock({ code, language, className, children }: Props) {
  return (
    <div className={className} data-language={language} data-streamdown="code-block">
      <pre>
        <code>{code}</code>
      </pre>
      {children}
    </div>
  );
}
