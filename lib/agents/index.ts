import "server-only";
import { accountChangeAgent, accountChangeAgentV1 } from "@/lib/agents/account-change/agent";
import { goodwillAgent } from "@/lib/agents/goodwill/agent";
import { orderSupportAgent } from "@/lib/agents/order-support/agent";
import { agentsOfPackage } from "@/lib/agents/packages";
import { refundAgent } from "@/lib/agents/refund/agent";
import { AGENT_PACKAGES } from "@/lib/agents/registered.generated";
import { registerAgent } from "@/lib/runtime/agents/registry";

/*
 * The app's agents. Importing this module registers them with the runtime (idempotent); the server start, the route
 * wrapper, the root layout and scripts import it, so every way into the runtime finds them. The shipped agents are
 * registered here; a team's agents come as packages listed in agents.config.json (see "Add your own agent" in the
 * README), registered after them.
 */
registerAgent(refundAgent);
registerAgent(accountChangeAgentV1);
registerAgent(accountChangeAgent);
registerAgent(goodwillAgent);
registerAgent(orderSupportAgent);
for (const agent of AGENT_PACKAGES.flatMap(agentsOfPackage)) registerAgent(agent);

/** The id of the agent a ticket gets when its request names none. */
export const DEFAULT_AGENT_ID = refundAgent.id;
