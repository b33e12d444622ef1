/**
 * Why items failed, in a few lines: the kinds of failure with how many items each, and one message of each kind, for the
 * end of `judgeflow run`, `judgeflow status` and the reports (report.json `failureReasons`, report.md, report.html).
 */
import { PANEL_QUORUM_ERROR } from './consensus';
import type { StoredJudgment, StoredResponse } from '../model/types';

export interface FailureReason {
  /** `answer <errorKind>` (a copilot's failure), `answer missing`, or `judgment …` (a judge's). */
  kind: string;
  count: number;
  /** The first such failure's message (one line, at most 300 characters), and which item it was. */
  message: string;
  example: { queryId: string; copilot: string };
}

const oneLine = (text: string) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 299)}…` : flat;
};

/** Most frequent first (then by kind); `judgments` are the reported verdicts (one per query × copilot). */
export function failureReasons(responses: StoredResponse[], judgments: StoredJudgment[], limit = 5): FailureReason[] {
  const byKind = new Map<string, FailureReason>();
  const add = (kind: string, message: string | null, item: { queryId: string; copilot: string }) => {
    const seen = byKind.get(kind);
    if (seen) seen.count++;
    else
      byKind.set(kind, {
        kind,
        count: 1,
        message: oneLine(message ?? 'no reason recorded'),
        example: { queryId: item.queryId, copilot: item.copilot },
      });
  };
  for (const r of responses)
    if (r.status !== 'ok')
      add(r.status === 'missing' ? 'answer missing' : `answer ${r.errorKind ?? 'failed'}`, r.errorMessage, r);
  for (const j of judgments)
    if (j.status === 'failed')
      add(
        j.error?.startsWith(PANEL_QUORUM_ERROR)
          ? 'judgment: too few panel judges'
          : /invalid judge answer/.test(j.error ?? '')
            ? 'judgment: invalid answer'
            : 'judgment failed',
        j.error,
        j,
      );
  return [...byKind.values()].sort((a, b) => b.count - a.count || a.kind.localeCompare(b.kind)).slice(0, limit);
}

/** Lines for a terminal: "  12 × answer timeout (q7 / Ace): copilot Ace did not answer within …". */
export function failureReasonLines(reasons: FailureReason[]): string[] {
  return reasons.map(
    (r) => `  ${r.count} × ${r.kind} (e.g. ${r.example.queryId} / ${r.example.copilot}): ${r.message}`,
  );
}
