/**
 * Every `patched(id)` / `deprecatePatch(id)` in workflows/ is registered here (test/workflows/patches.test.ts checks
 * it). A patch is the last resort for a change of workflow shape while runs of the old shape are still open; prefer
 * letting the build that started a run finish it. Each entry says when it was added, why, and when it can go: then
 * the old branch is deleted and the call becomes `deprecatePatch(id)` for one release, then it is removed.
 */
export interface PatchEntry {
  id: string;
  /** YYYY-MM-DD */
  added: string;
  reason: string;
  /** The condition under which the patch (and its old branch) can be deleted. */
  removableWhen: string;
}

export const PATCHES: readonly PatchEntry[] = [
  {
    id: 'import-first-queries-first',
    added: '2026-12-04',
    reason:
      "A run importing held answers stores every source's answers to the snapshot's first queries (FIRST_IMPORT_QUERIES, workflows/collectAndJudge.ts) in a step of their own before the rest, so their judging starts while the rest are read (issue 29: a 1,200 × 4 import took 0.6 s before the first judge call). A run started before imports it in one step per source.",
    removableWhen:
      'No run started by a build before 2026-12-04 is still open (judgeflow status lists none collecting), and the recorded histories in test/histories/ are re-recorded.',
  },
  {
    id: 'continue-as-new-at-own-limit',
    added: '2026-12-04',
    reason:
      "collectAndJudge continues as new at its own limit (8,192 events or 4 MB, workflows/historyLimit.ts) instead of at the server's suggestion (4,096 events): half the stalls of every lane at a continue-as-new. A history recorded before stopped its lanes at the suggestion, and replays so.",
    removableWhen:
      'No run started by a build without this patch is still open (its histories replay the old branch), and test/histories/ is re-recorded with it.',
  },
  {
    id: 'fill-batches',
    added: '2026-12-04',
    reason:
      "A judge's lane sizes a batch so that its place ends when the window's other places do (filledBatchSize, workflows/limits/itemGroupSize.ts): up to 50 items instead of 25 and a tail without long runs of single items, 45 activities instead of 113 for 1,200 judge items 12 at a time (issue 29). A run started before sized its judge batches by the share rule, and its histories replay that.",
    removableWhen:
      'No run started by a build without this patch is still open, and test/histories/ is re-recorded with it.',
  },
  {
    id: 'even-batches',
    added: '2026-12-05',
    reason:
      "A judge's lane cuts its place's part of the work left into equal batches, a part within a quarter item of a whole one taken up to it (evenBatchSize, workflows/limits/itemGroupSize.ts), timed by its batches' calls alone (CallTimes.ofBatches): the twelve places of a 1,200 × 4 joint run make the same starts and end together, where cut down to the largest batch they made three to five and ended up to 290 ms apart (issue 29). A run started before sized its batches by the plain filled rule, and its histories replay that.",
    removableWhen:
      'No run started by a build without this patch is still open, and test/histories/ is re-recorded with it.',
  },
];
