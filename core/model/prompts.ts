import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { readText } from '../io/dataFiles';
import { contentHash } from './hashing';
import { InputError } from './inputError';

/**
 * Delimiters the content cannot forge. Prompts fence what they quote (a query, an answer, a context) between `<<<` and
 * `>>>`, or between tags such as `<context>` … `</context>`; a quoted text that itself contains `>>>` or
 * `</context></response>` could close its fence and speak to the judge as the prompt. So every value put into a
 * template is neutralised here, whatever the template's wording: runs of three or more `<` or `>` become `‹‹‹` / `›››`,
 * and a tag the template uses as a fence (`<name>` or `</name>`, any case) has its angle brackets written as `&lt;`
 * `&gt;`. A value with none of them is put in unchanged, so requests (and answers reused for identical requests) stay
 * as they were. Blocks judgeflow builds around quoted text (`fenced`: the earlier turns, a CAB context) carry markers
 * no content can contain — a random per-process key, never in any output — turned into `<<<` / `>>>` after escaping.
 */
const FENCE_KEY = randomBytes(12).toString('hex');
const FENCE_OPEN = `\u0000open-${FENCE_KEY}\u0000`;
const FENCE_CLOSE = `\u0000close-${FENCE_KEY}\u0000`;

/** `text` between `<<<` and `>>>` lines, as a block a template may take whole (its text is neutralised like any value). */
export function fenced(text: string): string {
  return `${FENCE_OPEN}\n${text}\n${FENCE_CLOSE}`;
}

/** The tag names a template fences with: `<context>` … `</context>` (a tag with both ends in the template). */
function fenceTags(template: string): string[] {
  const opened = new Set([...template.matchAll(/<([A-Za-z][\w-]*)>/g)].map((m) => m[1].toLowerCase()));
  return [...new Set([...template.matchAll(/<\/([A-Za-z][\w-]*)>/g)].map((m) => m[1].toLowerCase()))].filter((t) =>
    opened.has(t),
  );
}

/** A value as the judge may see it inside a fence: it cannot open or close one. */
export function neutraliseDelimiters(value: string, tags: string[]): string {
  let out = value.replace(/<{3,}/g, (m) => '‹'.repeat(m.length)).replace(/>{3,}/g, (m) => '›'.repeat(m.length));
  if (tags.length) out = out.replace(new RegExp(`<(\\s*/?\\s*(?:${tags.join('|')})\\b[^<>]*)>`, 'gi'), '&lt;$1&gt;');
  return out;
}

/** `{{name}}` placeholders; an unknown placeholder is a rubric bug, so it fails loudly. Values are neutralised (above). */
export function renderTemplate(template: string, vars: Record<string, string>, where: string): string {
  const tags = fenceTags(template);
  const rendered = template.replace(/\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g, (_, name: string) => {
    if (!(name in vars))
      throw new InputError(`${where}: unknown placeholder {{${name}}}; available: ${Object.keys(vars).join(', ')}`);
    return neutraliseDelimiters(vars[name], tags);
  });
  return rendered.split(FENCE_OPEN).join('<<<').split(FENCE_CLOSE).join('>>>');
}

/** A rendered prompt must show what the judge is there to grade; a template that drops it fails at load. */
export function requireShown(rendered: string, samples: Record<string, string>, where: string): void {
  for (const [placeholder, sample] of Object.entries(samples)) {
    if (!rendered.includes(sample)) throw new InputError(`${where}: the prompt must contain ${placeholder}`);
  }
}

/** A system + user prompt pair read from files, versioned by the hash of both texts (change a word, get a new version). */
export interface PromptPair {
  system: string;
  user: string;
  version: string;
}

export function loadPromptPair(dir: string, systemFile: string, userFile: string, what: string): PromptPair {
  const system = readText(path.join(dir, systemFile), what);
  const user = readText(path.join(dir, userFile), what);
  return { system, user, version: contentHash({ system, user }) };
}
