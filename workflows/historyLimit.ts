/**
 * When a run's history is long enough to continue as new (workflows/collectAndJudge.ts).
 *
 * Temporal's server suggests continuing as new at 4,096 events or 4 MB (`continueAsNewSuggested`; dynamic config
 * `limit.historyCount.suggestContinueAsNew` and `limit.historySize.suggestContinueAsNew`), warns at 10,240 events /
 * 10 MB and fails the workflow at 51,200 / 50 MB. Every continue-as-new costs a run a stall: its lanes stop starting
 * calls, wait for those in flight, and the next history starts them again (0.4–0.8 s with every endpoint idle, measured
 * on the paper-scale run, docs/bench.md). So a run goes on to twice the server's count instead, and leaves the rest
 * to 10,240 for the calls in flight to finish.
 */

/**
 * Continue as new from this many events: twice the server's default suggestion. The 2,048 events left to Temporal's
 * warning are for the calls in flight to finish (and the items of a batch stopped part-way, asked one by one): in the
 * bench's paper-scale and 10× runs (2026-12-04, docs/bench.md) that took 106–191 events past this limit, and 382–454
 * past the server's suggestion when that came while two copilots' first batches still had their items to ask one by one.
 */
export const CONTINUE_AS_NEW_EVENTS = 8_192;

/**
 * Or from this many bytes of history: the server's default suggestion by size, 4 MB of Temporal's 10 MB warning. The
 * paper-scale run's histories hold about 180 bytes an event (0.77 MB at 4,300 events), so at its default the count
 * comes first.
 */
export const CONTINUE_AS_NEW_BYTES = 4 * 1024 * 1024;

/**
 * The server's suggestion is taken when it comes before this many events, a little under its default count (4,096):
 * then it is not the count rule this module replaces, but a suggestion by size or a server set to suggest sooner
 * (a test's dev server, test/workflows/continueAsNewInput.test.ts).
 */
export const SUGGESTION_TAKEN_BELOW_EVENTS = 4_000;

/** What of `workflowInfo()` the rule reads. */
export interface HistoryInfo {
  historyLength: number;
  historySize: number;
  continueAsNewSuggested: boolean;
}

/** True once the history is long enough to continue as new (see the constants above). */
export function historyFull(info: HistoryInfo): boolean {
  return (
    info.historyLength >= CONTINUE_AS_NEW_EVENTS ||
    info.historySize >= CONTINUE_AS_NEW_BYTES ||
    (info.continueAsNewSuggested && info.historyLength < SUGGESTION_TAKEN_BELOW_EVENTS)
  );
}
