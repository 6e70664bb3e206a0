import { z } from "zod";

/** Body of `POST /api/threads`: a customer ticket. */
export const createThreadBody = z.object({
  /** The customer's message. */
  message: z.string().trim().min(1, "message is required").max(5000),
  /** Order reference when the ticket system knows it (e.g. ORD-1001). */
  orderRef: z
    .string()
    .trim()
    .regex(/^ORD-\d{4}$/i, "orderRef looks like ORD-1234")
    .transform((s) => s.toUpperCase())
    .optional(),
  /** Short title for the inbox; derived from the message when absent. */
  title: z.string().trim().min(1).max(200).optional(),
});

export type CreateThreadBody = z.infer<typeof createThreadBody>;
