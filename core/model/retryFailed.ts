import { slotOf, type JudgeSlot, type JudgeUnit, type ReopenedItems } from './store';
// Re-exported: the store declares it (its reopenItems takes it); retries are where it is made.
export type { ReopenedItems } from './store';
import type { StoredJudgment, StoredResponse } from './types';

/** Which recorded failures `judgeflow retry RUN_ID --failed` asks again. */
export interface RetryFilter {
  /** Only this copilot's items. */
  copilot?: string;
  /**
   * Only failures of this kind: a response's `errorKind` (network, timeout, http, config, activity, …), or `judgment` for
   * failed judgments alone. Without it, every failed response and every failed judgment.
   */
  kind?: string;
}

/**
 * The failed items a retry reopens. A failed response is asked again, and every verdict of a unit that showed it (or of
 * the query, when no unit did) is judged again with the new answer; a failed judgment is judged again, its unit's stored
 * turns kept (they are answers already paid for). Nothing that succeeded is repeated otherwise.
 */
export function failedItems(
  responses: StoredResponse[],
  judgments: StoredJudgment[],
  units: JudgeUnit[],
  filter: RetryFilter = {},
): ReopenedItems {
  const mine = (copilot: string) => filter.copilot === undefined || copilot === filter.copilot;
  const reasked = responses.filter(
    (r) => r.status === 'failed' && mine(r.copilot) && (filter.kind === undefined || r.errorKind === filter.kind),
  );
  const slotKey = (q: string, s: JudgeSlot) => `${q}\u0000${s.sample}\u0000${s.judge}`;
  const judgmentKey = (q: string, c: string, s: JudgeSlot) => `${q}\u0000${c}\u0000${s.sample}\u0000${s.judge}`;
  const dropJudgments = new Set<string>();
  const dropTurns = new Map<string, { queryId: string } & JudgeSlot>();
  // Whether the protocol judges a query's answers together (CryptoAnalystBench's shared conversation, pairwise pairs):
  // then a unit of several answers exists somewhere in the run. LATTICE judges each answer on its own.
  const together = units.some((u) => u.copilots.length > 1);
  for (const r of reasked) {
    const showing = units.filter((u) => u.queryId === r.queryId && u.copilots.includes(r.copilot));
    // No unit showed the failed answer. Judged together, the new answer joins the query's units, so they are judged
    // afresh; judged alone, the other answers' verdicts stand and the new answer gets its own unit when it arrives.
    const affected = showing.length ? showing : together ? units.filter((u) => u.queryId === r.queryId) : [];
    for (const unit of affected) {
      const slot = slotOf(unit);
      for (const c of unit.copilots) dropJudgments.add(judgmentKey(unit.queryId, c, slot));
      dropTurns.set(slotKey(unit.queryId, slot), { queryId: unit.queryId, ...slot });
    }
    for (const j of judgments)
      if (j.queryId === r.queryId && j.copilot === r.copilot)
        dropJudgments.add(judgmentKey(j.queryId, j.copilot, slotOf({ sample: j.sample, judge: j.judgeName })));
  }
  if (filter.kind === undefined || filter.kind === 'judgment')
    for (const j of judgments)
      if (j.status === 'failed' && mine(j.copilot))
        dropJudgments.add(judgmentKey(j.queryId, j.copilot, slotOf({ sample: j.sample, judge: j.judgeName })));
  return {
    responses: reasked.map(({ queryId, copilot }) => ({ queryId, copilot })),
    judgments: [...dropJudgments].map((k) => {
      const [queryId, copilot, sample, judge] = k.split('\u0000');
      return { queryId, copilot, sample: Number(sample), judge };
    }),
    turns: [...dropTurns.values()],
  };
}
