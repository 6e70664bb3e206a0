import "server-only";
import { accountChangeAgent, accountChangeAgentV1 } from "@/lib/agents/account-change/agent";
import { goodwillAgent } from "@/lib/agents/goodwill/agent";
import { orderSupportAgent } from "@/lib/agents/order-support/agent";
import { refundAgent } from "@/lib/agents/refund/agent";
import { registerAgent } from "@/lib/runtime/agents/registry";

/*
 * The app's agents. Importing this module registers them with the runtime (idempotent); the server start, the route
 * wrapper, the root layout and scripts import it, so every way into the runtime finds them. To add an agent: write its
 * `AgentDefinition` next to its graph and register it here (see "Add your own agent" in the README).
 */
registerAgent(refundAgent);
registerAgent(accountChangeAgentV1);
registerAgent(accountChangeAgent);
registerAgent(goodwillAgent);
registerAgent(orderSupportAgent);

/** The id of the agent a ticket gets when its request names none. */
export const DEFAULT_AGENT_ID = refundAgent.id;
