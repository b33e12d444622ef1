/**
 * The cost table both report.html and report.md show: calls, tokens, latency, failures and estimated cost per copilot
 * and per judge model, as plain cells (each report escapes them its own way).
 */
import type { CostLine, CostSummary } from '../stats/cost';

export const COST_CAPTION = 'Calls, tokens and latency (every request sent, retried attempts included)';
export const COST_HEADER = ['who', 'model', 'calls', 'failed', 'failures by kind', 'tokens in', 'tokens out', 'cached in', 'latency p50', 'latency p95', 'estimated cost (USD)'];

const ms = (x: number | null) => (x === null ? '–' : x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${Math.round(x)} ms`);
const kinds = (l: CostLine) =>
  Object.entries(l.failuresByKind)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ') || '–';
/** Calls, and how many of them were answered by a Batch API or had their tokens estimated. */
const callsCell = (l: CostLine) => {
  const notes = [l.batchCalls ? `${l.batchCalls} by batch` : '', l.callsEstimated ? `${l.callsEstimated} estimated` : ''].filter(Boolean);
  return notes.length ? `${l.calls} (${notes.join(', ')})` : l.calls;
};

export function costRows(cost: CostSummary): Array<Array<string | number>> {
  const rows = [
    ...Object.entries(cost.copilots).map(([n, l]) => [`copilot ${n}`, l] as const),
    ...Object.entries(cost.judge).map(([n, l]) => [`judge ${n}`, l] as const),
  ];
  return rows.map(([who, l]) => [who, l.model ?? '–', callsCell(l), l.failed, kinds(l), l.promptTokens, l.completionTokens, l.cachedShare === null ? l.cachedTokens : `${l.cachedTokens} (${Math.round(l.cachedShare * 100)}%)`, ms(l.latencyP50Ms), ms(l.latencyP95Ms), l.estimatedCostUsd === null ? '–' : `$${l.estimatedCostUsd.toFixed(4)}`]);
}

/** The note under the table; `code` marks up the config snippet (an HTML `<code>` or a Markdown code span). */
export function costNote(cost: CostSummary, code: (text: string) => string): string {
  return `Total: ${cost.total.calls} calls, ${cost.total.promptTokens} tokens in, ${cost.total.completionTokens} tokens out${
    cost.total.estimatedCostUsd === null ? ` (no prices configured: add ${code('pricing: {MODEL: {inputPerMTok, outputPerMTok}}')} to the config for an estimate)` : `, estimated $${cost.total.estimatedCostUsd.toFixed(4)}`
  }. Tokens are the counts the endpoints reported; where an endpoint reported none, they are estimated from the request and reply size (about 4 characters a token) and the calls column says how many calls were (calls with no reply add no tokens). CSV answers cost nothing here.`;
}
