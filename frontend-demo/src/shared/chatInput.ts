// CopilotChat's send and add buttons show only an icon: their names, for a screen reader
// (axe-core's "button-name" rule), given through CopilotChat's `input` slot.
export const NAMED_BUTTONS = {
  sendButton: { "aria-label": "Send" },
  addMenuButton: { "aria-label": "Add a file or a tool" },
};
