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

export const PATCHES: readonly PatchEntry[] = [];
