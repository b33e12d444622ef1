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
    id: 'continue-as-new-at-own-limit',
    added: '2026-12-04',
    reason:
      "collectAndJudge continues as new at its own limit (8,192 events or 4 MB, workflows/historyLimit.ts) instead of at the server's suggestion (4,096 events): half the stalls of every lane at a continue-as-new. A history recorded before stopped its lanes at the suggestion, and replays so.",
    removableWhen:
      'No run started by a build without this patch is still open (its histories replay the old branch), and test/histories/ is re-recorded with it.',
  },
];
