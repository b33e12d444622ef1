import { JudgePlanner, judgeWorkFrom } from '../../workflows/judgePlanner';

/** The planner's bookkeeping of judge work items (its planning as answers arrive runs in endpointLane.test.ts). */

test('a fresh run: judge j of a panel of n takes items j, j+n, j+2n, … as they are planned', () => {
  const work = judgeWorkFrom(2);
  expect(work).toEqual({ planned: 0, next: [0, 1], redo: [[], []] });
  const planner = new JudgePlanner(work, [1, 1], async () => 0, { done: 0, total: 0, failures: 0 });
  work.planned = 5;
  expect([planner.unstarted(0), planner.unstarted(1)]).toEqual([3, 2]);
  expect(planner.source(0).take(3)).toEqual([0, 2, 4]);
  expect(planner.source(1).take(2)).toEqual([1, 3]);
  expect([planner.source(0).available(), planner.source(1).available()]).toEqual([0, 0]);
});

test('resumed from the store: the planned items found unjudged first, then every judge goes on after what was planned', () => {
  // 5 items planned before (0–4), of which 1 and 2 were not judged; a panel of two.
  const work = judgeWorkFrom(2, { planned: 5, unjudged: [1, 2] });
  expect(work).toEqual({ planned: 5, next: [6, 5], redo: [[2], [1]] });
  const planner = new JudgePlanner(work, [2, 2], async () => 0, { done: 0, total: 0, failures: 0 });
  expect([planner.unstarted(0), planner.unstarted(1)]).toEqual([1, 1]);
  work.planned = 9; // planned again: items 5–8
  expect(planner.source(0).take(3)).toEqual([2, 6, 8]);
  expect(planner.source(1).take(3)).toEqual([1, 5, 7]);
  expect(planner.unstarted(0) + planner.unstarted(1)).toBe(0);
  // One judge: everything from the first unplanned item.
  expect(judgeWorkFrom(1, { planned: 3, unjudged: [0] })).toEqual({ planned: 3, next: [3], redo: [[0]] });
});
