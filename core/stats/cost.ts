/**
 * What a run cost: calls, tokens, latency and failures per copilot and for the judge (one entry per judge
 * model, so a panel shows each member), from the calls recorded in the results store; an estimated price
 * when the config gives `pricing`. Also the up-front plan of `judgeflow run --dry-run`.
 */
import { quantileSorted } from './stats';
import type { LlmCallRecord } from '../model/types';

export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
  /** Price of cached prompt tokens, when the provider discounts them; default: the input price. */
  cachedInputPerMTok?: number;
  /** Prices of calls answered through a Batch API; default: half the live prices (OpenAI's and Anthropic's batch discount). */
  batchInputPerMTok?: number;
  batchOutputPerMTok?: number;
}
export type Pricing = Record<string, ModelPrice>;

export interface CostLine {
  model: string | null;
  calls: number;
  failed: number;
  failuresByKind: Record<string, number>;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  /**
   * The share of prompt tokens the provider served from its prompt cache (null before any prompt token was reported):
   * judge prompts put what every request shares (system prompt, rubric) first so that caching applies.
   */
  cachedShare: number | null;
  /** Calls whose endpoint reported no usage. */
  callsWithoutUsage: number;
  /** Calls answered through a Batch API (priced at the batch price). */
  batchCalls: number;
  /**
   * Of those, the calls whose tokens are estimated from the request's and the reply's characters (≈ 4 a token) and
   * included in the sums and the cost; the rest (no reply came, or recorded before sizes were) are not counted.
   */
  callsEstimated: number;
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
  /** null when the config has no price for this model (or copilot name). */
  estimatedCostUsd: number | null;
  /**
   * Requests answered from the results store instead of sent (`run --new --reuse-judgments`, re-judging): in none of
   * the figures above. `avoidedCostUsd` is what they would have cost live, from their request and answer sizes (≈ 4
   * characters a token); null when there is no price for the model.
   */
  reusedCalls: number;
  avoidedCostUsd: number | null;
}

export interface CostSummary {
  copilots: Record<string, CostLine>;
  judge: Record<string, CostLine>;
  total: {
    calls: number;
    promptTokens: number;
    completionTokens: number;
    estimatedCostUsd: number | null;
    reusedCalls: number;
    avoidedCostUsd: number | null;
  };
  priced: boolean;
}

/** Price of some tokens under one model's price; cached prompt tokens at their own rate when given. */
export function priceOf(
  price: ModelPrice | undefined,
  tokens: { promptTokens: number; completionTokens: number; cachedTokens?: number },
): number | null {
  if (!price) return null;
  const cached = tokens.cachedTokens ?? 0;
  const cachedRate = price.cachedInputPerMTok ?? price.inputPerMTok;
  return (
    ((tokens.promptTokens - cached) * price.inputPerMTok +
      cached * cachedRate +
      tokens.completionTokens * price.outputPerMTok) /
    1e6
  );
}

/**
 * The price of a Batch API call: the config's batch prices, else half the live ones — "50% cost discount compared to
 * synchronous APIs" (OpenAI, platform.openai.com/docs/guides/batch) and "all usage is charged at 50% of the standard
 * API prices" (Anthropic, docs.anthropic.com/en/docs/build-with-claude/batch-processing, "Pricing").
 */
export function batchPriceOf(price: ModelPrice | undefined): ModelPrice | undefined {
  if (!price) return undefined;
  const input = price.batchInputPerMTok ?? price.inputPerMTok / 2;
  return {
    inputPerMTok: input,
    outputPerMTok: price.batchOutputPerMTok ?? price.outputPerMTok / 2,
    cachedInputPerMTok: price.cachedInputPerMTok === undefined ? input : Math.min(input, price.cachedInputPerMTok / 2),
  };
}

const withoutUsage = (c: LlmCallRecord) => c.promptTokens === null && c.completionTokens === null;
/** A call reported without usage whose reply came: its size says roughly what it cost. */
const estimable = (c: LlmCallRecord) =>
  withoutUsage(c) && typeof c.requestChars === 'number' && typeof c.replyChars === 'number';

/** A call's tokens: as reported, or estimated from its size (≈ 4 characters a token) where the endpoint reported none. */
function tokensOfCall(c: LlmCallRecord): { promptTokens: number; completionTokens: number; cachedTokens: number } {
  if (estimable(c))
    return { promptTokens: tokensOf(c.requestChars!), completionTokens: tokensOf(c.replyChars!), cachedTokens: 0 };
  return {
    promptTokens: c.promptTokens ?? 0,
    completionTokens: c.completionTokens ?? 0,
    cachedTokens: c.cachedTokens ?? 0,
  };
}

/**
 * THE key of `pricing` for one call, the same in the dry-run plan, the budget watch, batch-round sizing and the report:
 * the model the call was sent to, else the endpoint's name (http and browser copilots have no model). A panel member,
 * a grounding judge or a taxonomy call is so priced by its model, never by the member's name. A Batch API call is
 * priced at the batch price.
 */
export function priceFor(
  pricing: Pricing | undefined,
  who: { model?: string | null; name?: string | null; batch?: boolean },
): ModelPrice | undefined {
  const prices = pricing ?? {};
  const price = (who.model ? prices[who.model] : undefined) ?? (who.name ? prices[who.name] : undefined);
  return who.batch ? batchPriceOf(price) : price;
}

/** What one recorded call cost (null: no price for it), through priceFor. */
export function callCostUsd(pricing: Pricing | undefined, call: LlmCallRecord): number | null {
  return priceOf(priceFor(pricing, call), tokensOfCall(call));
}

/** A line's tokens by what prices them (model, batch): integer sums, so they add up the same in any order. */
type Buckets = Map<
  string,
  { model: string | null; batch: boolean; promptTokens: number; completionTokens: number; cachedTokens: number }
>;

function addToBuckets(buckets: Buckets, c: LlmCallRecord): void {
  const key = JSON.stringify([c.model ?? null, Boolean(c.batch)]);
  const b = buckets.get(key) ?? {
    model: c.model ?? null,
    batch: Boolean(c.batch),
    promptTokens: 0,
    completionTokens: 0,
    cachedTokens: 0,
  };
  const t = tokensOfCall(c);
  b.promptTokens += t.promptTokens;
  b.completionTokens += t.completionTokens;
  b.cachedTokens += t.cachedTokens;
  buckets.set(key, b);
}

/**
 * A line's cost: each bucket priced through priceFor, in the order of their keys, so a running tally (the budget watch,
 * activities/spend.ts) and a sum over every call give the same figure to the last bit. One unpriced bucket makes the
 * line's cost unknown, never $0.
 */
function bucketsCost(buckets: Buckets, pricing: Pricing | undefined, name: string): number | null {
  let total = 0;
  for (const key of [...buckets.keys()].sort()) {
    const b = buckets.get(key)!;
    const cost = priceOf(priceFor(pricing, { model: b.model, name, batch: b.batch }), b);
    if (cost === null) return null;
    total += cost;
  }
  return total;
}

/**
 * Every call priced by priceFor: copilots by their model, or by their name (http/browser copilots); judges by model.
 * The calls in llmCalls' order; the report feeds the same tally a page at a time (reportCost, services/runReport.ts).
 */
export function summariseCost(calls: LlmCallRecord[], copilots: string[], pricing: Pricing | undefined): CostSummary {
  const tally = newCostTally();
  tallyCostCalls(tally, calls);
  return costOfTally(tally, copilots, pricing);
}

/** One line's running tally: what summariseCost's line needs for the budget watch's figures, fed calls a few at a time. */
interface LineTally {
  role: LlmCallRecord['role'];
  name: string;
  /** Where the line's first call sorts (at, then the order it was fed): the judge lines' order in summariseCost. */
  first: [string, number];
  /** The line's model: of its first call (by at) that names one, as summariseCost's line takes it. */
  model: { at: string; n: number; model: string } | null;
  calls: number;
  callsWithoutUsage: number;
  callsEstimated: number;
  promptTokens: number;
  completionTokens: number;
  buckets: Buckets;
}

/**
 * A run's calls tallied so far, fed in the order they were recorded (any `at` order): nothing in it depends on the
 * pricing, which spendOfTally applies at each look (a resume can change it).
 */
export interface SpendTally {
  fed: number;
  lines: Map<string, LineTally>;
}

export const newSpendTally = (): SpendTally => ({ fed: 0, lines: new Map() });

/** Before: does (at, n) sort before the other, as llmCalls orders calls (at, then insertion)? */
const before = (at: string, n: number, other: [string, number]) => at < other[0] || (at === other[0] && n < other[1]);

/** A line with no call counted yet: `first` is where it first appears (the order summariseCost lists judge lines in). */
function newLine(role: LlmCallRecord['role'], name: string, first: [string, number]): LineTally {
  return {
    role,
    name,
    first,
    model: null,
    calls: 0,
    callsWithoutUsage: 0,
    callsEstimated: 0,
    promptTokens: 0,
    completionTokens: 0,
    buckets: new Map(),
  };
}

export function tallyCalls(tally: SpendTally, calls: LlmCallRecord[]): void {
  for (const c of calls) {
    const n = tally.fed++;
    const key = JSON.stringify([c.role, c.name]);
    let l = tally.lines.get(key);
    if (!l) {
      l = newLine(c.role, c.name, [c.at, n]);
      tally.lines.set(key, l);
    }
    if (before(c.at, n, l.first)) l.first = [c.at, n];
    if (c.model && (!l.model || before(c.at, n, [l.model.at, l.model.n]))) l.model = { at: c.at, n, model: c.model };
    if (c.reused) continue;
    l.calls++;
    if (withoutUsage(c)) l.callsWithoutUsage++;
    if (estimable(c)) l.callsEstimated++;
    const t = tokensOfCall(c);
    l.promptTokens += t.promptTokens;
    l.completionTokens += t.completionTokens;
    addToBuckets(l.buckets, c);
  }
}

/** summariseCost's totals (calls, tokens, cost, calls without usage and estimated) from a tally, priced now. */
export function spendOfTally(
  tally: SpendTally,
  copilots: string[],
  pricing: Pricing | undefined,
): { usd: number | null; tokens: number; calls: number; callsWithoutUsage: number; callsEstimated: number } {
  const copilotLines = copilots.map(
    (name) => tally.lines.get(JSON.stringify(['copilot', name])) ?? newLine('copilot', name, ['', 0]),
  );
  const judgeLines = [...tally.lines.values()]
    .filter((l) => l.role === 'judge')
    .sort((a, b) => (before(a.first[0], a.first[1], b.first) ? -1 : 1));
  const lines = [...copilotLines, ...judgeLines];
  const costs = lines.map((l) =>
    l.calls === 0
      ? priceFor(pricing, { model: l.model?.model ?? null, name: l.name })
        ? 0
        : null
      : bucketsCost(l.buckets, pricing, l.name),
  );
  const priced = Boolean(pricing) && costs.some((c) => c !== null);
  return {
    usd: priced ? costs.reduce<number>((n, c) => n + (c ?? 0), 0) : null,
    tokens: lines.reduce((n, l) => n + l.promptTokens, 0) + lines.reduce((n, l) => n + l.completionTokens, 0),
    calls: lines.reduce((n, l) => n + l.calls, 0),
    callsWithoutUsage: lines.reduce((n, l) => n + l.callsWithoutUsage, 0),
    callsEstimated: lines.reduce((n, l) => n + l.callsEstimated, 0),
  };
}

/** What a line of report.json's cost needs beyond its spend tally: failures, cached and batch calls, latencies, reused calls. */
interface LineDetails {
  failed: number;
  /** Each kind's count and where its first failure sorts: summariseCost lists kinds in the order they first failed. */
  failuresByKind: Map<string, { count: number; first: [string, number] }>;
  cachedTokens: number;
  batchCalls: number;
  latencies: number[];
  /** Calls answered from the store, with where they sort: their avoided costs add up in llmCalls' order. */
  reused: Array<{ at: string; n: number; call: LlmCallRecord }>;
}

/**
 * A run's calls tallied for report.json's cost block, fed a page at a time in the order they were recorded (any `at`
 * order; llmCallsAfter's pages): the report reads the calls in pages instead of all at once (issue 35), and keeps per
 * call only its latency (for the percentiles) and any call answered from the store.
 */
export interface CostTally {
  spend: SpendTally;
  details: Map<string, LineDetails>;
}

export const newCostTally = (): CostTally => ({ spend: newSpendTally(), details: new Map() });

export function tallyCostCalls(tally: CostTally, calls: LlmCallRecord[]): void {
  const fed = tally.spend.fed;
  tallyCalls(tally.spend, calls);
  calls.forEach((c, i) => {
    const n = fed + i;
    const key = JSON.stringify([c.role, c.name]);
    let d = tally.details.get(key);
    if (!d) {
      d = { failed: 0, failuresByKind: new Map(), cachedTokens: 0, batchCalls: 0, latencies: [], reused: [] };
      tally.details.set(key, d);
    }
    if (c.reused) {
      d.reused.push({ at: c.at, n, call: c });
      return;
    }
    if (!c.ok) {
      d.failed++;
      const kind = c.errorKind ?? 'unknown';
      const k = d.failuresByKind.get(kind);
      if (!k) d.failuresByKind.set(kind, { count: 1, first: [c.at, n] });
      else {
        k.count++;
        if (before(c.at, n, k.first)) k.first = [c.at, n];
      }
    }
    d.cachedTokens += tokensOfCall(c).cachedTokens;
    if (c.batch) d.batchCalls++;
    d.latencies.push(c.latencyMs);
  });
}

/** summariseCost's line from a tally: the same figures, in the same order, as from every call read at once. */
function lineOfTally(l: LineTally, d: LineDetails | undefined, pricing: Pricing | undefined): CostLine {
  const kinds = [...(d?.failuresByKind ?? [])].sort(([, x], [, y]) =>
    before(x.first[0], x.first[1], y.first) ? -1 : 1,
  );
  const failuresByKind: Record<string, number> = Object.fromEntries(kinds.map(([kind, { count }]) => [kind, count]));
  const cachedTokens = d?.cachedTokens ?? 0;
  const latencies = [...(d?.latencies ?? [])].sort((a, b) => a - b);
  const reused = [...(d?.reused ?? [])].sort((a, b) => (before(a.at, a.n, [b.at, b.n]) ? -1 : 1));
  const avoided = reused.map((r) => callCostUsd(pricing, r.call));
  const model = l.model?.model ?? null;
  return {
    model,
    calls: l.calls,
    failed: d?.failed ?? 0,
    failuresByKind,
    promptTokens: l.promptTokens,
    completionTokens: l.completionTokens,
    cachedTokens,
    cachedShare: l.promptTokens > 0 ? cachedTokens / l.promptTokens : null,
    callsWithoutUsage: l.callsWithoutUsage,
    callsEstimated: l.callsEstimated,
    batchCalls: d?.batchCalls ?? 0,
    latencyP50Ms: latencies.length ? quantileSorted(latencies, 0.5) : null,
    latencyP95Ms: latencies.length ? quantileSorted(latencies, 0.95) : null,
    estimatedCostUsd:
      l.calls === 0 ? (priceFor(pricing, { model, name: l.name }) ? 0 : null) : bucketsCost(l.buckets, pricing, l.name),
    reusedCalls: reused.length,
    avoidedCostUsd: avoided.some((c) => c === null) ? null : avoided.reduce<number>((n, c) => n + c!, 0),
  };
}

/** summariseCost of every call tallied, whatever the pages it was fed in (test/services/reportCost.test.ts). */
export function costOfTally(tally: CostTally, copilots: string[], pricing: Pricing | undefined): CostSummary {
  const lineOf = (l: LineTally) => lineOfTally(l, tally.details.get(JSON.stringify([l.role, l.name])), pricing);
  const copilotLines: Record<string, CostLine> = {};
  for (const name of copilots)
    copilotLines[name] = lineOf(
      tally.spend.lines.get(JSON.stringify(['copilot', name])) ?? newLine('copilot', name, ['', 0]),
    );
  const judge: Record<string, CostLine> = {};
  for (const l of [...tally.spend.lines.values()]
    .filter((x) => x.role === 'judge')
    .sort((a, b) => (before(a.first[0], a.first[1], b.first) ? -1 : 1)))
    judge[l.name] = lineOf(l);
  const lines = [...Object.values(copilotLines), ...Object.values(judge)];
  const priced = Boolean(pricing) && lines.some((l) => l.estimatedCostUsd !== null);
  return {
    copilots: copilotLines,
    judge,
    total: {
      calls: lines.reduce((n, l) => n + l.calls, 0),
      promptTokens: lines.reduce((n, l) => n + l.promptTokens, 0),
      completionTokens: lines.reduce((n, l) => n + l.completionTokens, 0),
      estimatedCostUsd: priced ? lines.reduce((n, l) => n + (l.estimatedCostUsd ?? 0), 0) : null,
      reusedCalls: lines.reduce((n, l) => n + l.reusedCalls, 0),
      avoidedCostUsd: priced ? lines.reduce((n, l) => n + (l.avoidedCostUsd ?? 0), 0) : null,
    },
    priced,
  };
}

export interface PlannedEndpoint {
  role: 'copilot' | 'judge';
  name: string;
  endpoint: string;
  model: string | null;
  calls: number;
  /** Rough token estimate behind the cost estimate (≈ 4 characters a token; assumed answer lengths). */
  estimatedPromptTokens: number;
  estimatedCompletionTokens: number;
  estimatedCostUsd: number | null;
}

/** Assumed answer lengths for the dry-run estimate: a copilot's answer, a judge verdict. */
export const ASSUMED_COPILOT_ANSWER_TOKENS = 400;
export const ASSUMED_JUDGE_ANSWER_TOKENS = 250;
const tokensOf = (chars: number) => Math.ceil(chars / 4);

/** What a copilot is sent for a query: its text and earlier turns (the size a copilot call's estimate starts from). */
export const queryCharsOf = (q: { text: string; history?: Array<{ content: string }> }) =>
  q.text.length + (q.history ?? []).reduce((m, t) => m + t.content.length, 0);

/**
 * The calls a run will make if every request succeeds first time (retries and invalid judge answers add to it):
 * one per query and copilot that does not read its answers from a file; judge calls as the protocol makes them (`judgeCallsPerQuery`, given the
 * number of answers to one query). `promptChars` is the judge prompt's fixed size (rubric text), for the estimate.
 */
export function planCalls(args: {
  queries: Array<{ text: string; history?: Array<{ content: string }> }>;
  copilots: Array<{ name: string; type: string; model?: string; baseURL?: string; url?: string }>;
  /** Every judge (a panel's members each make every judge call). */
  judges: Array<{ name: string; model: string; baseURL: string; batch?: boolean }>;
  judgeCallsPerQuery: (answers: number) => number;
  judgePromptChars: number;
  pricing?: Pricing;
}): PlannedEndpoint[] {
  const queryChars = args.queries.reduce((n, q) => n + queryCharsOf(q), 0);
  const answering = args.copilots.length;
  const out: PlannedEndpoint[] = args.copilots.map((c) => {
    // Answers read from a file (csv, file): no calls.
    const held = c.type === 'csv' || c.type === 'file';
    const calls = held ? 0 : args.queries.length;
    const prompt = held ? 0 : tokensOf(queryChars);
    const completion = calls * ASSUMED_COPILOT_ANSWER_TOKENS;
    const price = priceFor(args.pricing, c);
    return {
      role: 'copilot',
      name: c.name,
      endpoint: held ? `${c.type} file (no calls)` : (c.baseURL ?? c.url ?? c.type),
      model: c.model ?? null,
      calls,
      estimatedPromptTokens: prompt,
      estimatedCompletionTokens: completion,
      estimatedCostUsd: priceOf(price, { promptTokens: prompt, completionTokens: completion }),
    };
  });
  const judgeCalls = args.queries.length * args.judgeCallsPerQuery(answering);
  const judgePrompt =
    judgeCalls * tokensOf(args.judgePromptChars + ASSUMED_COPILOT_ANSWER_TOKENS * 4) +
    tokensOf(queryChars) * args.judgeCallsPerQuery(answering);
  const judgeCompletion = judgeCalls * ASSUMED_JUDGE_ANSWER_TOKENS;
  for (const judge of args.judges)
    out.push({
      role: 'judge',
      name: judge.name || judge.model,
      endpoint: judge.baseURL,
      model: judge.model,
      calls: judgeCalls,
      estimatedPromptTokens: judgePrompt,
      estimatedCompletionTokens: judgeCompletion,
      estimatedCostUsd: priceOf(priceFor(args.pricing, { model: judge.model, batch: judge.batch }), {
        promptTokens: judgePrompt,
        completionTokens: judgeCompletion,
      }),
    });
  return out;
}

/**
 * A request's tokens before it is sent (a batch line's price is known before submit): the prompt at ≈ 4 characters a
 * token of what it carries (messages, Anthropic's system and tools), and the answer at `answerTokens` (the caller's
 * estimate: the mean of this run's judge answers so far, else ASSUMED_JUDGE_ANSWER_TOKENS) — at most the request's own
 * max_tokens / max_completion_tokens, which the provider never exceeds.
 */
export function requestTokens(
  body: Record<string, unknown>,
  answerTokens: number,
): { promptTokens: number; completionTokens: number } {
  const carried = [body.messages, body.system, body.tools].filter((v) => v !== undefined);
  const cap = [body.max_tokens, body.max_completion_tokens].find((v): v is number => typeof v === 'number' && v > 0);
  return {
    promptTokens: tokensOf(JSON.stringify(carried).length),
    completionTokens: Math.ceil(cap === undefined ? answerTokens : Math.min(cap, answerTokens)),
  };
}

/** The mean answer length of a run's answered judge calls to `model` (reported usage only), else the assumed one. */
export function meanAnswerTokens(calls: LlmCallRecord[], model: string): number {
  const answered = calls.filter(
    (c) => c.role === 'judge' && c.model === model && c.ok && typeof c.completionTokens === 'number',
  );
  return answered.length
    ? answered.reduce((n, c) => n + c.completionTokens!, 0) / answered.length
    : ASSUMED_JUDGE_ANSWER_TOKENS;
}

/** One copilot call as the store records it (the collect activity's per-item call, or an agent's per-turn one). */
export function copilotCallRecord(
  item: { runId: string; copilot: string; queryId: string; model: string | null },
  c: {
    ok: boolean;
    errorKind: string | null;
    latencyMs: number;
    usage?: { promptTokens: number | null; completionTokens: number | null; cachedTokens: number | null };
    requestChars: number | null;
    replyChars: number | null;
  },
): LlmCallRecord {
  return {
    runId: item.runId,
    role: 'copilot',
    name: item.copilot,
    model: item.model,
    queryId: item.queryId,
    promptTokens: c.usage?.promptTokens ?? null,
    completionTokens: c.usage?.completionTokens ?? null,
    cachedTokens: c.usage?.cachedTokens ?? null,
    latencyMs: c.latencyMs,
    ok: c.ok,
    errorKind: c.errorKind,
    requestChars: c.requestChars,
    replyChars: c.replyChars,
    at: new Date().toISOString(),
  };
}
