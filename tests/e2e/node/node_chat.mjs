// An AI SDK chat in Node: `ai`'s AbstractChat (what useChat wraps) with a plain ChatState, as
// @ai-sdk/react keeps it (arrays replaced on every change). `ai` is the package given (5, 6, 7).
//
//   import { chatClass } from './node_chat.mjs';
//   const NodeChat = chatClass(ai);
//   const chat = new NodeChat({ id, transport, messages });
class ChatState {
  status = 'ready';
  error = undefined;
  constructor(messages = []) {
    this.messages = messages;
  }
  pushMessage = (m) => { this.messages = this.messages.concat(m); };
  popMessage = () => { this.messages = this.messages.slice(0, -1); };
  replaceMessage = (i, m) => {
    this.messages = [...this.messages.slice(0, i), structuredClone(m), ...this.messages.slice(i + 1)];
  };
  snapshot = (v) => structuredClone(v);
}

/** The chat class of `ai` (the module): `new (chatClass(ai))({ messages, ...init })`. */
export function chatClass(ai) {
  return class NodeChat extends ai.AbstractChat {
    constructor({ messages, ...init }) {
      super({ ...init, state: new ChatState(messages) });
    }
  };
}
