/** The last deploy shadow report as the admin page shows it (lib/runtime/views/shadow-report.ts). */
export interface ShadowReportView {
  createdAt: string;
  candidate: string;
  baseline: string;
  /** 0: nothing money or a customer sees would differ; 1: something would. */
  exitCode: number;
  /** Threads by verdict, in words ("amounts changed": 2). */
  summary: { verdict: string; threads: number }[];
  threads: { threadId: string; agent: string; versions: string; verdict: string; details: string[] }[];
}
