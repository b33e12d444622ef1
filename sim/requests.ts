// Request reading, OpenAI-shaped errors and the default copilot answer, shared by the simulator's endpoints (sim/server.ts, sim/anthropic.ts, sim/batch/).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { seededRandom } from '../core/stats/random';
import { jsonAnswer, readBody, writeAnswer, type HttpAnswer } from './http';
import { intBetween, pick } from './schemaAnswer';
import type { SimOptions, SimRequestLog } from './types';

/** Read one request and log it, for every endpoint: its JSON body (undefined when it is not JSON) and its log entry. */
export async function receive(
  req: IncomingMessage,
  path: string,
  options: SimOptions,
  log: SimRequestLog[],
): Promise<{ body: any; entry: SimRequestLog; requestIndex: number }> {
  const raw = (await readBody(req)).toString('utf8');
  const parsing = performance.now();
  let body: any;
  try {
    body = JSON.parse(raw);
  } catch {
    body = undefined;
  }
  // Log even rejected requests (raw text for bad JSON) so tests can see exactly what arrived.
  const entry: SimRequestLog = {
    at: Date.now(),
    path,
    model: typeof body?.model === 'string' ? body.model : '',
    body: body ?? raw,
    headers: flattenHeaders(req),
    workMs: performance.now() - parsing,
  };
  const requestIndex = log.push(entry) - 1;
  options.onRequest?.(entry);
  return { body, entry, requestIndex };
}

const STOPWORDS = new Set(
  "what which when where will would should could does with from that this there their about into your have been over than then them they these those price today right now much many more most also just like make give tell explain please some's".split(
    ' ',
  ),
);

/** Distinctive words of the question (tickers first), so different queries get different answers. */
function keywords(question: string): string[] {
  const tickers = question.match(/\$?\b[A-Z]{2,6}\b/g)?.map((t) => t.replace('$', '')) ?? [];
  const words = question.match(/[A-Za-z][A-Za-z0-9-]{3,}/g)?.filter((w) => !STOPWORDS.has(w.toLowerCase())) ?? [];
  const seen = new Set<string>();
  const unique = [...tickers, ...words].filter((w) => !seen.has(w.toLowerCase()) && seen.add(w.toLowerCase()));
  return unique.length > 0 ? unique.slice(0, 5) : ['the market'];
}

/** A deterministic crypto-analyst answer; its style is chosen by words in the model name. */
export function defaultCopilotAnswer(model: string, messages: Array<{ role: string; content: string }>): string {
  const question = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const rng = seededRandom(`copilot:${model}:${question}`);
  const keys = keywords(question);
  const topic = keys.join(', ');
  const subject = keys[0] ?? 'the market';
  const stance = pick(rng, ['cautiously bullish', 'neutral', 'cautiously bearish']);
  const pct = () => `${intBetween(rng, 2, 45)}%`;
  if (/refuser/i.test(model))
    return `I'm sorry, but I can't provide financial advice about ${topic}. Please consult a licensed professional.`;
  if (/terse/i.test(model)) return `On ${topic}: I'm ${stance} on ${subject} over the next few weeks.`;
  if (/thorough/i.test(model)) {
    return [
      `Here is a structured view on ${topic}.`,
      '',
      `- **Summary:** I'm ${stance} on ${subject} because on-chain activity changed ${pct()} over 30 days while funding rates stayed near ${(rng() * 0.05).toFixed(3)}%.`,
      `- **Data:** 7-day volume moved ${pct()}, exchange reserves shifted ${pct()}, and roughly ${intBetween(rng, 10, 90)}% of supply has been unmoved for over a year.`,
      `- **Risks:** liquidity is thin at key levels, so a ${pct()} drawdown is plausible; regulatory news and token unlocks are further downside risk.`,
      `- **What would change my view:** a sustained break of the ${intBetween(rng, 20, 200)}-day moving average or a reversal in net flows.`,
      '',
      `1. Size positions so a ${pct()} move is survivable.`,
      `2. Re-check ${keys.slice(1).join(' and ') || subject} data weekly, because conditions change quickly.`,
      '',
      'This is analysis, not financial advice.',
    ].join('\n');
  }
  return [
    `Regarding ${topic}: I'm ${stance} on ${subject}. Activity rose about ${pct()} recently, which supports the current trend.`,
    `- Key level to watch: the ${intBetween(rng, 20, 200)}-day average.`,
    `- Main risk: a sharp reversal in sentiment.`,
  ].join('\n');
}

/** OpenAI's error shape: `{"error": {"message", "type", "param", "code"}}`. */
export function errorAnswer(
  status: number,
  message: string,
  type: string,
  code: string | null,
  headers?: Record<string, string>,
  param: string | null = null,
): HttpAnswer {
  return jsonAnswer(status, { error: { message, type, param, code } }, headers);
}

export function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  type: string,
  code: string | null,
  headers?: Record<string, string>,
  param: string | null = null,
): void {
  writeAnswer(res, errorAnswer(status, message, type, code, headers, param));
}

function flattenHeaders(req: IncomingMessage): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(req.headers)) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}
