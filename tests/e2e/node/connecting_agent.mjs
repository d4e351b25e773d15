// clients/live-state's connectingAgent on a real @ag-ui/client ('@ag-ui/client' 1.0, or
// 'agui0059' 0.0.59, the one CopilotKit 1.74 bundles): the ConnectingAgent the demo and the
// guides use, built on the client under test's HttpAgent.
//
//   const ConnectingAgent = await connectingAgentClass('@ag-ui/client');
import { connectingAgent } from '../../../clients/live-state/index.js';

/** The ConnectingAgent class, built on `client`'s HttpAgent. */
export async function connectingAgentClass(client) {
  const { HttpAgent, runHttpRequest, transformHttpEventStream } = await import(client);
  return connectingAgent(HttpAgent, { runHttpRequest, transformHttpEventStream });
}
