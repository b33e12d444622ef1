import { z } from 'zod';
import type { AnswerSource } from '../../core/model/types';

/**
 * What an http copilot's reply says it had besides its answer: the context (tool outputs, retrieved text) at
 * `contextPath` and the citation list at `sourcesPath`, for the grounding checks (docs/grounding.md).
 */
export const replyContextShape = {
  contextPath: z
    .string()
    .min(1)
    .optional()
    .describe(
      'where the context the copilot had (tool outputs, retrieved text) is in the JSON reply: a string, or an array of strings or objects (joined)',
    ),
  sourcesPath: z
    .string()
    .min(1)
    .optional()
    .describe(
      'where the citation list is in the JSON reply: objects with an id or url, a title, and the text when the API gives it',
    ),
};

export type ReplyContextPaths = { contextPath?: string; sourcesPath?: string };

/** Context and sources read from a parsed reply; absent paths and empty values give nothing. */
export function replyContext(
  reply: unknown,
  paths: ReplyContextPaths,
  getPath: (value: unknown, path: string) => unknown,
): { context?: string; sources?: AnswerSource[] } {
  const context = paths.contextPath === undefined ? undefined : contextText(getPath(reply, paths.contextPath));
  const sources = paths.sourcesPath === undefined ? undefined : sourceList(getPath(reply, paths.sourcesPath));
  return { ...(context ? { context } : {}), ...(sources?.length ? { sources } : {}) };
}

/** A string as it is; an array's items (strings as they are, anything else as JSON) one after another; other values as JSON. */
export function contextText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value.trim() ? value : undefined;
  const part = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v, null, 2));
  const text = Array.isArray(value)
    ? value
        .filter((v) => v !== null && v !== undefined)
        .map(part)
        .join('\n\n')
    : part(value);
  return text.trim() ? text : undefined;
}

const firstString = (o: Record<string, unknown>, keys: string[]): string | undefined => {
  for (const k of keys) {
    const v = o[k];
    if (typeof v === 'string' && v.trim()) return v;
    if (typeof v === 'number') return String(v);
  }
  return undefined;
};

/**
 * A citation list in the shapes APIs use: objects ({id|index|source_id, url|link|href|uri, title|name,
 * text|content|snippet}) or bare URL strings. A source without an id is numbered from 1, as answers cite them ([1]).
 */
export function sourceList(value: unknown): AnswerSource[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value
    .map((item, i): AnswerSource | null => {
      if (typeof item === 'string')
        return item.trim()
          ? { id: String(i + 1), ...(/^https?:\/\//.test(item) ? { url: item } : { text: item }) }
          : null;
      if (!item || typeof item !== 'object') return null;
      const o = item as Record<string, unknown>;
      const source: AnswerSource = {
        id: firstString(o, ['id', 'index', 'source_id', 'ref']) ?? String(i + 1),
        url: firstString(o, ['url', 'link', 'href', 'uri']),
        title: firstString(o, ['title', 'name']),
        text: firstString(o, ['text', 'content', 'snippet', 'excerpt']),
      };
      return Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined)) as AnswerSource;
    })
    .filter((s): s is AnswerSource => s !== null);
}
