import type { Metadata } from "next";
import { NewTicketForm } from "@/components/new-ticket/new-ticket-form";
import { answeringPage, requirePageUser } from "@/lib/auth/page";
import { getDatabase } from "@/lib/db/client";
import { listAgents } from "@/lib/runtime/agents/registry";
import { intakeJsonSchema } from "@/lib/runtime/runs/intake";
import { listOrders } from "@/lib/shop/orders-list";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "New ticket" };

/** Start a ticket as the shop's ticket system would: a customer message about one of the demo orders. */
async function NewTicketPage() {
  await requirePageUser("/threads/new", "operator");
  const { db } = await getDatabase();
  const orders = await listOrders({ db });
  return (
    <div className="max-w-3xl space-y-4">
      <div>
        <h1 className="text-2xl font-semibold">New ticket</h1>
        <p className="mt-1 text-sm text-slate-700">
          A customer writes in. The agent for the kind of request reads the message, looks up what it needs
          and asks an operator whenever a person has to decide. Each agent asks for the fields its ticket
          needs.
        </p>
      </div>
      <NewTicketForm
        orders={orders}
        agents={listAgents().map((agent) => ({
          id: agent.id,
          title: agent.title,
          description: agent.description,
          intake: intakeJsonSchema(agent),
        }))}
        renderedAt={Date.now()}
      />
    </div>
  );
}

export default answeringPage(NewTicketPage);
