/**
 * Deterministic answers for the simulator: a JSON-schema walker (drawing from core's seeded PRNG) that
 * fabricates a value satisfying the schema, and the "quality signal" that biases judge scores.
 *
 * Everything here is pure: the same inputs always give the same output, so tests and the
 * offline demo are reproducible across runs and machines.
 */
import { randomIndex, seededRandom, shuffled, type Random } from '../core/stats/random';
import { harmfulRequest, rubricQuality, substanceWords, withoutRepeats } from './judgeHeuristics';

export function pick<T>(rng: Random, items: readonly T[]): T {
  return items[randomIndex(rng, items.length)] as T;
}

export function intBetween(rng: Random, min: number, max: number): number {
  return min + Math.floor(rng() * (max - min + 1));
}

/**
 * Hints that make judge answers look like real judging instead of noise.
 * `quality` (0..1) biases every `*score` field; `itemQualities[i]` overrides it inside the
 * i-th element of the nearest enclosing array (one entry per judged response).
 */
export interface AnswerHints {
  quality?: number;
  itemQualities?: number[];
  /** Added to every `*score` (before rounding and clamping to the schema's range): a judge's leniency, bias or noise. */
  scoreShift?: () => number;
}

interface WalkContext {
  root: any;
  rng: Random;
  hints: AnswerHints;
  key: string;
  arrayIndex: number | undefined;
  depth: number;
}

/** Deterministic JSON satisfying `schema` (the subset of JSON Schema that structured outputs use). */
export function answerForSchema(schema: any, seedText: string, hints: AnswerHints = {}): unknown {
  const ctx: WalkContext = {
    root: schema,
    rng: seededRandom(seedText),
    hints,
    key: '',
    arrayIndex: undefined,
    depth: 0,
  };
  return walk(schema, ctx);
}

function walk(schema: any, ctx: WalkContext): unknown {
  // Recursive $refs could loop forever; past this depth the simplest valid-ish value is fine.
  if (ctx.depth > 32 || schema === true || schema == null || typeof schema !== 'object') return null;
  const s = resolve(schema, ctx.root);
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return pick(ctx.rng, s.enum);
  const variants = s.anyOf ?? s.oneOf;
  if (Array.isArray(variants) && variants.length > 0) return walk(variants[0], deeper(ctx));
  if (Array.isArray(s.allOf)) return walk(mergeAllOf(s, ctx.root), deeper(ctx));
  switch (typeOf(s)) {
    case 'object':
      return objectAnswer(s, ctx);
    case 'array':
      return arrayAnswer(s, ctx);
    case 'integer':
      return numberAnswer(s, ctx, true);
    case 'number':
      return numberAnswer(s, ctx, false);
    case 'boolean':
      return ctx.rng() < 0.5;
    case 'null':
      return null;
    default:
      return stringAnswer(s, ctx);
  }
}

function deeper(ctx: WalkContext, patch: Partial<WalkContext> = {}): WalkContext {
  return { ...ctx, ...patch, depth: ctx.depth + 1 };
}

/** Follow local JSON pointers such as `#/$defs/Score` or `#/definitions/Score`. */
function resolve(schema: any, root: any): any {
  let current = schema;
  for (let hops = 0; typeof current?.$ref === 'string' && hops < 32; hops++) {
    const ref: string = current.$ref;
    if (!ref.startsWith('#')) throw new Error(`sim: only local $ref is supported, got ${ref}`);
    const target = ref
      .slice(1)
      .split('/')
      .filter(Boolean)
      .map((part) => decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((node: any, part) => node?.[part], root);
    if (target === undefined) throw new Error(`sim: unresolvable $ref ${ref}`);
    // Sibling keywords next to $ref (e.g. a description) are kept; the target wins on conflicts.
    const { $ref: _ignored, ...siblings } = current;
    current = { ...siblings, ...target };
  }
  return current;
}

function mergeAllOf(schema: any, root: any): any {
  const { allOf, ...rest } = schema;
  return (allOf as any[])
    .map((part) => resolve(part, root))
    .reduce(
      (acc, part) => ({
        ...acc,
        ...part,
        properties: { ...acc.properties, ...part.properties },
        required: [...(acc.required ?? []), ...(part.required ?? [])],
      }),
      { properties: {}, ...rest },
    );
}

function typeOf(s: any): string {
  const t = Array.isArray(s.type) ? (s.type.find((x: string) => x !== 'null') ?? 'null') : s.type;
  if (typeof t === 'string') return t;
  if (s.properties) return 'object';
  if (s.items) return 'array';
  return 'string';
}

function objectAnswer(s: any, ctx: WalkContext): Record<string, unknown> {
  const properties: Record<string, any> = s.properties ?? {};
  // Every declared property is produced (structured outputs require them all anyway);
  // required names without a declared schema still get a value so `required` holds.
  const names = [...new Set([...Object.keys(properties), ...((s.required as string[] | undefined) ?? [])])];
  const out: Record<string, unknown> = {};
  for (const name of names) out[name] = walk(properties[name] ?? {}, deeper(ctx, { key: name }));
  return out;
}

function arrayAnswer(s: any, ctx: WalkContext): unknown[] {
  const items = resolve(s.items ?? {}, ctx.root);
  const choices: unknown[] | undefined = Array.isArray(items.enum) ? items.enum : undefined;
  // A fixed-length array over an enum of the same length is how judges are asked to rank labels.
  if (choices && s.minItems === choices.length && s.maxItems === choices.length) return shuffled(choices, ctx.rng);
  // A generator asked for queries gets a handful per call, like a real one.
  const min = typeof s.minItems === 'number' ? s.minItems : /quer|question/i.test(ctx.key) ? 5 : 1;
  const count = typeof s.maxItems === 'number' ? Math.min(min, s.maxItems) : min;
  const out = Array.from({ length: count }, (_, i) => walk(items, deeper(ctx, { arrayIndex: i })));
  // One entry per label shown (a joint judge's `agent` enum, as long as the array): each label once, in the order shown.
  const labelled = Object.entries(items.properties ?? {}).find(
    ([, p]: [string, any]) => Array.isArray(p?.enum) && p.enum.length === count && s.minItems === count,
  );
  if (labelled)
    out.forEach((item, i) => ((item as Record<string, unknown>)[labelled[0]] = (labelled[1] as any).enum[i]));
  return out;
}

function numberAnswer(s: any, ctx: WalkContext, integer: boolean): number {
  let min =
    typeof s.minimum === 'number'
      ? s.minimum
      : typeof s.exclusiveMinimum === 'number'
        ? s.exclusiveMinimum + (integer ? 1 : 0.01)
        : 0;
  let max =
    typeof s.maximum === 'number'
      ? s.maximum
      : typeof s.exclusiveMaximum === 'number'
        ? s.exclusiveMaximum - (integer ? 1 : 0.01)
        : Math.max(10, min);
  if (integer) {
    min = Math.ceil(min);
    max = Math.floor(max);
  }
  const quality = /score$/i.test(ctx.key) ? qualityFor(ctx) : undefined;
  const base = quality === undefined ? min + ctx.rng() * (max - min) : biased(quality, min, max, ctx.rng);
  const raw = quality !== undefined && ctx.hints.scoreShift ? base + ctx.hints.scoreShift() : base;
  const value = integer ? Math.round(raw) : Math.round(raw * 100) / 100;
  return Math.min(max, Math.max(min, value));
}

function qualityFor(ctx: WalkContext): number | undefined {
  const { quality, itemQualities } = ctx.hints;
  if (itemQualities && ctx.arrayIndex !== undefined && itemQualities[ctx.arrayIndex] !== undefined)
    return itemQualities[ctx.arrayIndex];
  return quality;
}

/** Place the score at `quality` along the range, then add ±15% of the range as deterministic noise. */
function biased(quality: number, min: number, max: number, rng: Random): number {
  const noise = (rng() * 2 - 1) * 0.15 * (max - min);
  return min + quality * (max - min) + noise;
}

const SUBJECTS = ['The response', 'This answer', 'The analysis', 'The reply'];
const VERBS = ['covers', 'addresses', 'explains', 'touches on'];
const OBJECTS = ['the main question', 'on-chain context', 'market risks', 'the key numbers', 'the user intent'];
const CLOSERS = [
  'with adequate support.',
  'but could cite more sources.',
  'clearly and concisely.',
  'with some gaps in depth.',
];

const ASSETS = [
  'BTC',
  'ETH',
  'SOL',
  'ARB',
  'OP',
  'LINK',
  'AAVE',
  'UNI',
  'HYPE',
  'PENDLE',
  'TIA',
  'JUP',
  'ENA',
  'EIGEN',
];
const ASKS = [
  'Should I stake my {a} now or wait until after',
  'How risky is borrowing against {a} on Aave ahead of',
  'What would make {a} outperform ETH over',
  'Is it a good time to rotate {n}% of my {a} into stablecoins before',
  'How does the {a} supply schedule change after',
  'What are the main risks of holding {a} through',
];
const WHENS = [
  'the next token unlock',
  'the upcoming ETF decision',
  'a 20% drawdown',
  'the next FOMC meeting',
  'the next quarter',
  'a six-month horizon',
];

/** A plausible, varied user question: what a query generator would return. */
function questionAnswer(rng: Random): string {
  return `${pick(rng, ASKS)
    .replace('{a}', pick(rng, ASSETS))
    .replace('{n}', String(intBetween(rng, 10, 60)))} ${pick(rng, WHENS)}?`;
}

function stringAnswer(s: any, ctx: WalkContext): string {
  const { rng } = ctx;
  if (/quer|question/i.test(ctx.key) && !s.enum) return questionAnswer(rng);
  if (s.format === 'date-time')
    return new Date(Date.UTC(2024, 0, 1) + intBetween(rng, 0, 365) * 86_400_000).toISOString();
  if (s.format === 'date')
    return new Date(Date.UTC(2024, 0, 1) + intBetween(rng, 0, 365) * 86_400_000).toISOString().slice(0, 10);
  let text = `${pick(rng, SUBJECTS)} ${pick(rng, VERBS)} ${pick(rng, OBJECTS)} ${pick(rng, CLOSERS)}`;
  const minLength = typeof s.minLength === 'number' ? s.minLength : 0;
  while (text.length < minLength) text += ` ${pick(rng, OBJECTS)}.`;
  return typeof s.maxLength === 'number' ? text.slice(0, s.maxLength) : text;
}

/**
 * Quality signal in 0..1 for a judged text, so the demo's scores track answer quality:
 * 40% length (log-scaled, saturating near 300 words), 20% structure (bullet or numbered lines),
 * 20% figures (numbers), 20% reasoning vocabulary ("risk", "because", ...). Refusals are capped low, except where
 * the request is one to decline (see judgeHeuristics.ts, applied by judgeHints).
 */
export function qualitySignal(answer: string): number {
  const text = withoutRepeats(answer); // a line said twice counts once: padding earns nothing
  const words = substanceWords(text);
  const length = Math.min(1, Math.log1p(words) / Math.log1p(300));
  const structure = Math.min(1, (text.match(/^\s*(?:[-*•]|\d+[.)])\s+/gm)?.length ?? 0) / 5);
  const figures = Math.min(1, (text.match(/\d+(?:[.,]\d+)?%?/g)?.length ?? 0) / 6);
  const reasoning = Math.min(
    1,
    (text.match(/\b(?:risks?|because|however|therefore|liquidity|volatility|downside)\b/gi)?.length ?? 0) / 4,
  );
  const score = 0.4 * length + 0.2 * structure + 0.2 * figures + 0.2 * reasoning;
  const refusal = /\b(?:can(?:no|')t|unable to|not able to)\b.*\b(?:advice|help|provide)\b/i.test(text) && words < 80;
  return refusal ? Math.min(score, 0.15) : score;
}

/**
 * Hints for a judge prompt: the judged text is found either in `<response ...>...</response>`
 * (or `<answer>`) blocks, or in `<<< ... >>>` blocks under a heading line that mentions "response"
 * (the rubric prompts' "Copilot response:" layout) or is "answer:" (the LATTICE reference harness's [Agent] blocks). One quality per block, in order; without
 * such blocks the whole message is used.
 */
export function judgeHints(judgePrompt: string): AnswerHints {
  const tagged = [...judgePrompt.matchAll(/<(response|answer)\b[^>]*>([\s\S]*?)<\/\1>/gi)].map((m) => m[2] ?? '');
  const fenced = [...judgePrompt.matchAll(/^(?:[^\n]*response[^\n]*|answer:)\n<<<\n?([\s\S]*?)\n?>>>/gim)].map(
    (m) => m[1] ?? '',
  );
  // The LATTICE reference's joint layout: `[Agent]`, `name: <label>`, `answer:` and the answer fenced.
  const agents = [...judgePrompt.matchAll(/^\[Agent\]\nname: [^\n]*\nanswer:\n<<<\n([\s\S]*?)\n>>>/gm)].map(
    (m) => m[1] ?? '',
  );
  const blocks = agents.length > 0 ? agents : tagged.length > 0 ? tagged : fenced;
  if (blocks.length === 0) return { quality: qualitySignal(judgePrompt) };
  // What is asked is read from the prompt without the judged answers (an answer quoting the request must not change it).
  const harmful = harmfulRequest(blocks.reduce((prompt, block) => prompt.replace(block, ''), judgePrompt));
  const itemQualities = blocks.map((block) => rubricQuality(block, qualitySignal(block), harmful));
  return { quality: itemQualities.reduce((a, b) => a + b, 0) / itemQualities.length, itemQualities };
}
