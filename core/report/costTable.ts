/**
 * The cost table both report.html and report.md show: calls, tokens, latency, failures and estimated cost per copilot
 * and per judge model, as plain cells (each report escapes them its own way).
 */
import type { CostLine, CostSummary } from '../stats/cost';

export const COST_CAPTION = 'Calls, tokens and latency (every request sent, retried attempts included)';
const HEADER = [
  'who',
  'model',
  'calls',
  'failed',
  'failures by kind',
  'tokens in',
  'tokens out',
  'cached in',
  'latency p50',
  'latency p95',
  'estimated cost (USD)',
];
const REUSED_HEADER = 'answered from the store (avoided cost)';

/** Lines that reused stored answers (`run --new --reuse-judgments`, re-judging) add a column saying how many, and what that saved. */
const anyReused = (cost: CostSummary) =>
  [...Object.values(cost.copilots), ...Object.values(cost.judge)].some((l) => l.reusedCalls > 0);

export function costHeader(cost: CostSummary): string[] {
  return anyReused(cost) ? [...HEADER, REUSED_HEADER] : HEADER;
}

const usd = (x: number | null) => (x === null ? '–' : `$${x.toFixed(4)}`);
const reusedCell = (l: CostLine) =>
  l.reusedCalls ? `${l.reusedCalls} (${l.avoidedCostUsd === null ? 'no price' : usd(l.avoidedCostUsd)})` : 0;
const ms = (x: number | null) => (x === null ? '–' : x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${Math.round(x)} ms`);
const kinds = (l: CostLine) =>
  Object.entries(l.failuresByKind)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ') || '–';
/** Calls, and how many of them were answered by a Batch API or had their tokens estimated. */
const callsCell = (l: CostLine) => {
  const notes = [
    l.batchCalls ? `${l.batchCalls} by batch` : '',
    l.callsEstimated ? `${l.callsEstimated} estimated` : '',
  ].filter(Boolean);
  return notes.length ? `${l.calls} (${notes.join(', ')})` : l.calls;
};

export function costRows(cost: CostSummary): Array<Array<string | number>> {
  const rows = [
    ...Object.entries(cost.copilots).map(([n, l]) => [`copilot ${n}`, l] as const),
    ...Object.entries(cost.judge).map(([n, l]) => [`judge ${n}`, l] as const),
  ];
  const reused = anyReused(cost);
  return rows.map(([who, l]) => [
    who,
    l.model ?? '–',
    callsCell(l),
    l.failed,
    kinds(l),
    l.promptTokens,
    l.completionTokens,
    l.cachedShare === null ? l.cachedTokens : `${l.cachedTokens} (${Math.round(l.cachedShare * 100)}%)`,
    ms(l.latencyP50Ms),
    ms(l.latencyP95Ms),
    usd(l.estimatedCostUsd),
    ...(reused ? [reusedCell(l)] : []),
  ]);
}

/** The note under the table; `code` marks up the config snippet (an HTML `<code>` or a Markdown code span). */
export function costNote(cost: CostSummary, code: (text: string) => string): string {
  return `Total: ${cost.total.calls} calls, ${cost.total.promptTokens} tokens in, ${cost.total.completionTokens} tokens out${
    cost.total.estimatedCostUsd === null
      ? ` (no prices configured: add ${code('pricing: {MODEL: {inputPerMTok, outputPerMTok}}')} to the config for an estimate)`
      : `, estimated $${cost.total.estimatedCostUsd.toFixed(4)}`
  }. Tokens are the counts the endpoints reported; where an endpoint reported none, they are estimated from the request and reply size (about 4 characters a token) and the calls column says how many calls were (calls with no reply add no tokens). CSV answers cost nothing here.${reusedNote(cost)}`;
}

function reusedNote(cost: CostSummary): string {
  if (!cost.total.reusedCalls) return '';
  const avoided =
    cost.total.avoidedCostUsd === null
      ? ''
      : ` (about $${cost.total.avoidedCostUsd.toFixed(4)} avoided, from their request and answer sizes)`;
  return ` ${cost.total.reusedCalls} judge requests were byte-identical to ones answered before and were answered from the results store: no call was made for them, and they are in none of the figures above${avoided}.`;
}
