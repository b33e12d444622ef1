import type { AnswerSource } from '../../model/types';

/** Message content as text: a string, or an array of parts (`[{type: "text", text}]`) joined; null when there is none. */
export function contentText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const texts = content
      .map((p) => (typeof p === 'string' ? p : typeof p?.text === 'string' ? p.text : ''))
      .filter(Boolean);
    return texts.length ? texts.join('') : null;
  }
  return null;
}

/**
 * Drop reasoning blocks: R1-style models on vLLM, Ollama, Together and Fireworks start the content with
 * `<think>…</think>` (some servers strip the opening tag and leave only `…</think>`). What remains is the answer.
 */
export function stripThink(text: string): string {
  let out = text.replace(/^\uFEFF/, '');
  out = out.replace(/<think(?:ing)?>[\s\S]*?<\/think(?:ing)?>/gi, '');
  const close = out.search(/<\/think(?:ing)?>/i);
  if (close >= 0) out = out.slice(out.indexOf('>', close) + 1); // an opening tag the server already removed
  if (/^\s*<think(?:ing)?>/i.test(out)) return ''; // never closed: all of it was reasoning (the budget ran out)
  return out.trim();
}

/**
 * The JSON value an answer holds, read robustly: the whole text, else each fenced block (anywhere), else the first
 * balanced `{…}` that parses — so prose before or after, a BOM or a think block do not fail a good answer.
 */
export function extractJson(raw: string): { value: unknown } | { error: string } {
  const text = stripThink(raw);
  if (!text) return { error: 'empty answer' };
  let firstError = '';
  const attempt = (candidate: string): { value: unknown } | null => {
    try {
      return { value: JSON.parse(candidate) };
    } catch (error) {
      firstError ||= (error as Error).message;
      return null;
    }
  };
  const whole = attempt(text);
  if (whole) return whole;
  for (const fence of text.matchAll(/```[a-zA-Z]*\s*\n?([\s\S]*?)```/g)) {
    const inFence = attempt(fence[1].trim());
    if (inFence) return inFence;
  }
  for (let start = text.indexOf('{'); start >= 0; start = text.indexOf('{', start + 1)) {
    const end = balancedEnd(text, start);
    if (end < 0) continue;
    const object = attempt(text.slice(start, end + 1));
    if (object) return object;
  }
  return { error: `answer is not valid JSON (${firstError})` };
}

/** Index of the `}` closing the object opened at `start` (strings and escapes respected), or -1. */
function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i;
  }
  return -1;
}

/** What a finish_reason other than a normal stop means, in words; null for stop (or when none was given). */
export function finishProblem(finishReason: unknown): string | null {
  if (finishReason === 'length' || finishReason === 'max_tokens')
    return 'the answer was cut off at the token limit (finish_reason "length"; a reasoning model may have spent the budget thinking — raise maxTokens)';
  if (finishReason === 'content_filter')
    return 'the provider\'s content filter stopped the answer (finish_reason "content_filter")';
  return null;
}

/** A reply that is a tool call instead of text, named with the tools it called. */
export function toolCallProblem(message: any): string | null {
  const calls = Array.isArray(message?.tool_calls)
    ? message.tool_calls
    : message?.function_call
      ? [{ function: message.function_call }]
      : [];
  if (!calls.length) return null;
  const names = calls.map((c: any) => c?.function?.name ?? c?.type ?? '?').join(', ');
  return `the model answered with a tool call (${names}) instead of text; judgeflow does not run tools for an openai copilot`;
}

/**
 * Sources a search-grounded answer cites: Perplexity-style top-level `citations` (URLs) and `search_results`
 * ({title, url}), and OpenAI's message `annotations` of type url_citation.
 */
export function sourcesOf(completion: any, message: any): AnswerSource[] {
  const sources: AnswerSource[] = [];
  const seen = new Set<string>();
  const add = (source: AnswerSource) => {
    const key = source.url ?? source.title ?? JSON.stringify(source);
    if (!seen.has(key)) (seen.add(key), sources.push(source));
  };
  if (Array.isArray(completion?.search_results))
    for (const r of completion.search_results)
      if (r && typeof r.url === 'string')
        add({
          url: r.url,
          ...(typeof r.title === 'string' ? { title: r.title } : {}),
          ...(typeof r.snippet === 'string' ? { text: r.snippet } : {}),
        });
  if (Array.isArray(completion?.citations))
    completion.citations.forEach((c: unknown, i: number) => {
      if (typeof c === 'string') add({ id: String(i + 1), url: c });
      else if (c && typeof (c as any).url === 'string')
        add({
          id: String(i + 1),
          url: (c as any).url,
          ...(typeof (c as any).title === 'string' ? { title: (c as any).title } : {}),
        });
    });
  if (Array.isArray(message?.annotations))
    for (const a of message.annotations) {
      const u = a?.type === 'url_citation' ? (a.url_citation ?? a) : null;
      if (u && typeof u.url === 'string')
        add({ url: u.url, ...(typeof u.title === 'string' ? { title: u.title } : {}) });
    }
  return sources;
}
