import { condition } from '@temporalio/workflow';
import type { WorkSource } from './endpointLane';
import type { JudgeWorkState, StageCounts } from '../contract/run';

/** Queries handed to one planning step at most (a re-judge or a CSV import makes every query ready at once). */
const READY_BATCH = 200;

/**
 * Judge work as answers arrive: queries with new answers wait here, and once a judge is about to run out of work (under
 * two windows of its items left) the protocol says which work items they make ready (`planReady`, an activity). The
 * answers that arrived meanwhile are planned in one step, so fewer activities and workflow tasks compete with the
 * calls. Each judge of a panel takes its own items (i mod n) from `source(lane)`.
 */
export class JudgePlanner {
  private readonly pending: string[] = [];
  private readonly pendingSet = new Set<string>();
  private finished = false;

  constructor(
    private readonly work: JudgeWorkState,
    /** Per judge (one, or each of a panel), its concurrency. */
    private readonly concurrencies: number[],
    /** Plan the work these queries' answers make ready; returns how many work items the run has now. */
    private readonly planReady: (queryIds: string[]) => Promise<number>,
    private readonly counts: StageCounts,
  ) {}

  /** A query got an answer (or a failure for good) the planner has not seen yet. */
  answered(queryId: string): void {
    if (this.pendingSet.has(queryId)) return;
    this.pendingSet.add(queryId);
    this.pending.push(queryId);
  }

  /** Plan as answers arrive, until `collecting()` is false and every answer seen is planned. */
  async run(collecting: () => boolean): Promise<void> {
    const needed = () => this.concurrencies.some((concurrency, lane) => this.unstarted(lane) < 2 * concurrency);
    for (;;) {
      await condition(() => (this.pending.length > 0 && needed()) || !collecting());
      if (!this.pending.length) break;
      const batch = this.pending.splice(0, READY_BATCH);
      batch.forEach((q) => this.pendingSet.delete(q));
      this.work.planned = await this.planReady(batch);
      this.counts.total = this.work.planned;
    }
    this.finished = true;
  }

  /** Work items planned and not started yet of judge `lane`. */
  unstarted(lane: number): number {
    const fresh = Math.ceil(Math.max(0, this.work.planned - this.work.next[lane]) / this.concurrencies.length);
    return (this.work.redo[lane]?.length ?? 0) + fresh;
  }

  /** Judge `lane`'s items: first those to judge again, then the planned ones in order; closed once planning is done. */
  source(lane: number): WorkSource<number> {
    return {
      available: () => this.unstarted(lane),
      take: (count) => {
        const items = (this.work.redo[lane] ?? []).splice(0, count);
        for (; items.length < count; this.work.next[lane] += this.concurrencies.length)
          items.push(this.work.next[lane]);
        return items;
      },
      closed: () => this.finished,
    };
  }
}

/** Where each judge's items start: from the first (fresh), or after what a run resumed from the store had planned. */
export function judgeWorkFrom(judges: number, stored?: { planned: number; unjudged: number[] }): JudgeWorkState {
  const planned = stored?.planned ?? 0;
  const lanes = Array.from({ length: judges }, (_, lane) => lane);
  return {
    planned,
    next: lanes.map((lane) => planned + ((lane - (planned % judges) + judges) % judges)),
    redo: lanes.map((lane) => (stored?.unjudged ?? []).filter((i) => i % judges === lane)),
  };
}
