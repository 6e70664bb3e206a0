/** What a run executes, as stored on the run row (so a recovered run can execute it again). */
export type RunInput =
  | {
      kind: "input";
      messageId: string;
      text: string;
      /** Run from this checkpoint instead of the head (a rollback: the stopped run's checkpoints are left behind). */
      fromCheckpointId?: string;
    }
  /** Continue a thread whose last run failed, from its last checkpoint (nothing done is done again). */
  | { kind: "retry" }
  | {
      kind: "resume";
      /** Who answered: recorded by the graph with the decision. */
      actor: string;
      resume: {
        interruptId: string;
        status: "resolved" | "cancelled";
        payload?: unknown;
        /** Who answered this one (a staged answer may be someone else's than `actor`), and when (ISO 8601). */
        by?: string;
        at?: string;
      }[];
    }
  | {
      /** A person's branch, or the move of a paused thread onto a newer version (`source: "migration"`). */
      kind: "fork" | "migration";
      /** The checkpoint forked from. */
      checkpointId: string;
      /** The new checkpoint the fork created (the branch's first), which the run continues from. */
      forkCheckpointId: string;
      values?: Record<string, unknown>;
      asNode?: string;
      /** "Answer differently": the decision this branch asks again, and the head of the line that answered it. */
      answerDifferently?: AnswerDifferently;
    };

/** A branch made to answer a decision otherwise: which decision, and where the line that answered it had got to. */
export interface AnswerDifferently {
  interruptId: string;
  otherHead: string | null;
}
