/**
 * One self-contained HTML page: inline CSS, inline script, data embedded as JSON, no remote anything.
 * Used by every HTML report (runs, compares, and whatever else wants a page: studies) and by `judgeflow view`.
 *
 * Safety: every text that came from outside (queries, answers, rationales, names) is either escaped here
 * (`esc`) or put into the page as JSON and turned into DOM nodes with textContent by the page script;
 * nothing untrusted is ever parsed as HTML. A Content-Security-Policy with a per-page nonce keeps any
 * injected markup from running script or loading anything from the network.
 */
import crypto from 'node:crypto';
// The page's own script and styles, read beside this module through the I/O room (core/ stays free of fs elsewhere).
import { readTextInside } from '../../io/dataFiles';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Escape text for HTML element content and quoted attribute values. */
export const esc = (value: unknown): string => String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]);

/** JSON that is safe inside a <script> element: `<` (and the two JS line separators) escaped, so no `</script>` can end it. */
export function scriptJson(data: unknown): string {
  return scriptSafe(JSON.stringify(data));
}

const scriptSafe = (json: string): string =>
  json
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

/**
 * An array in a page's data that is made item by item as the page is written (report.html's drill-down rows, one per
 * answer): htmlPageChunks writes one item at a time, so the rows of a large run are never all held, nor one string.
 * JSON.stringify (through toJSON) gives the whole array, the same text. Its items may come from an async source (rows
 * that read the store a page at a time): such a page is written through htmlPageChunksAsync.
 */
export class StreamedArray<T> implements Iterable<T>, AsyncIterable<T> {
  constructor(private readonly items: () => Iterable<T> | AsyncIterable<T>) {}
  [Symbol.iterator](): Iterator<T> {
    const items = this.items();
    if (!(Symbol.iterator in items)) throw new Error('this array is read asynchronously: use htmlPageChunksAsync');
    return items[Symbol.iterator]();
  }
  [Symbol.asyncIterator](): AsyncIterator<T> {
    const items = this.items();
    return Symbol.asyncIterator in items
      ? (items as AsyncIterable<T>)[Symbol.asyncIterator]()
      : (async function* () {
          yield* items as Iterable<T>;
        })();
  }
  toJSON(): T[] {
    return [...this];
  }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' &&
  value !== null &&
  (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null) &&
  typeof (value as { toJSON?: unknown }).toJSON !== 'function';

const holdsStream = (value: unknown): boolean =>
  value instanceof StreamedArray || (isPlainObject(value) && Object.values(value).some(holdsStream));

/** JSON.stringify(value)'s text in pieces: plain objects that hold a StreamedArray are written key by key, it item by item. */
function* jsonChunks(value: unknown): Generator<string> {
  for (const piece of jsonPieces(value)) {
    if (typeof piece === 'string') yield piece;
    else {
      let first = true;
      for (const item of piece) {
        yield (first ? '' : ',') + (JSON.stringify(item) ?? 'null');
        first = false;
      }
    }
  }
}

/** jsonChunks for data whose StreamedArrays may read their items asynchronously. */
async function* jsonChunksAsync(value: unknown): AsyncGenerator<string> {
  for (const piece of jsonPieces(value)) {
    if (typeof piece === 'string') yield piece;
    else {
      let first = true;
      for await (const item of piece) {
        yield (first ? '' : ',') + (JSON.stringify(item) ?? 'null');
        first = false;
      }
    }
  }
}

/** The text around a page's StreamedArrays, and each of them (between its brackets) in its place. */
function* jsonPieces(value: unknown): Generator<string | StreamedArray<unknown>> {
  if (value instanceof StreamedArray) {
    yield '[';
    yield value;
    yield ']';
  } else if (isPlainObject(value) && holdsStream(value)) {
    let first = true;
    yield '{';
    for (const [key, item] of Object.entries(value)) {
      // JSON.stringify leaves these keys out of an object.
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      yield (first ? '' : ',') + JSON.stringify(key) + ':';
      first = false;
      yield* jsonPieces(item);
    }
    yield '}';
  } else yield JSON.stringify(value);
}

/** A number as reports print it ('–' when missing). */
export const num = (x: number | null | undefined, digits = 1): string =>
  x === null || x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(digits);

export interface PageOptions {
  title: string;
  /** Trusted HTML built with `esc` (the page's header block). */
  header: string;
  /** Trusted HTML built with `esc` (sections, charts, tables). */
  body: string;
  /** Embedded as `<script type="application/json" id="report-data">` for the page script (drill-down, live views). */
  data?: unknown;
  /** Extra origins the page may fetch from (`judgeflow view` pages poll their own server: "'self'"). */
  connect?: string;
}

let clientScript: string | undefined;
/** The page script (drill-down, Markdown, live lists): plain browser JavaScript kept beside this module. */
function pageScript(): string {
  clientScript ??= readTextInside(__dirname, 'client.js', 'the report page script');
  return clientScript;
}

let styles: string | undefined;
function pageStyles(): string {
  styles ??= readTextInside(__dirname, 'page.css', 'the report page styles');
  return styles;
}

/** The Content-Security-Policy of a page (also sent as a header by `judgeflow view`). */
export function contentSecurityPolicy(nonce: string, connect = "'none'"): string {
  return `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; img-src data:; connect-src ${connect}; base-uri 'none'; form-action 'none'`;
}

export function htmlPage(options: PageOptions): string {
  return [...htmlPageChunks(options)].join('');
}

/** A page's text in order, in pieces (see StreamedArray): report.html is written to its file piece by piece. */
export function* htmlPageChunks(options: PageOptions): Generator<string> {
  const { head, foot } = pageFrame(options);
  yield head;
  if (options.data !== undefined) {
    yield '<script type="application/json" id="report-data">';
    // Each piece is escaped alone: the escapes are of single characters, so the pieces escape as the whole would.
    for (const chunk of jsonChunks(options.data)) yield scriptSafe(chunk);
    yield '</script>\n';
  } else yield '\n';
  yield foot;
}

/** htmlPageChunks for a page whose data reads rows asynchronously (the same text). */
export async function* htmlPageChunksAsync(options: PageOptions): AsyncGenerator<string> {
  const { head, foot } = pageFrame(options);
  yield head;
  if (options.data !== undefined) {
    yield '<script type="application/json" id="report-data">';
    for await (const chunk of jsonChunksAsync(options.data)) yield scriptSafe(chunk);
    yield '</script>\n';
  } else yield '\n';
  yield foot;
}

function pageFrame(options: PageOptions): { head: string; foot: string } {
  const nonce = crypto.randomBytes(16).toString('base64');
  const head = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${esc(contentSecurityPolicy(nonce, options.connect))}">
<meta name="referrer" content="no-referrer">
<title>${esc(options.title)}</title>
<style>${pageStyles()}</style>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="page-header">${options.header}</header>
<main id="main">
${options.body}
</main>
`;
  const foot = `<script nonce="${nonce}">${pageScript()}</script>
</body>
</html>
`;
  return { head, foot };
}

/** A section with a heading and an id for the table of contents. */
export function section(id: string, title: string, inner: string, intro = ''): string {
  return `<section id="${esc(id)}" aria-labelledby="${esc(id)}-h"><h2 id="${esc(id)}-h">${esc(title)}</h2>${intro ? `<p class="intro">${intro}</p>` : ''}${inner}</section>`;
}

/** Links to the page's sections. */
export function toc(entries: Array<[id: string, title: string]>): string {
  return `<nav aria-label="Sections" class="toc"><ul>${entries.map(([id, title]) => `<li><a href="#${esc(id)}">${esc(title)}</a></li>`).join('')}</ul></nav>`;
}

/** Numbers (and formatted figures: "$0.01", "120 ms", "+1.20", "–") align right; words align left. */
const isNumeric = (c: unknown) =>
  typeof c === 'number' || c === null || /^(?:[-+$]?[\d.,]+(?:e-?\d+)?(?: ms| s|%)?|–|< ?0\.001)$/.test(String(c));

/** A plain table of already-formatted cells (escaped here). */
export function dataTable(
  caption: string,
  header: string[],
  rows: Array<Array<string | number | null>>,
  attrs = '',
): string {
  return `<div class="table-wrap"><table ${attrs}><caption>${esc(caption)}</caption><thead><tr>${header.map((h) => `<th scope="col">${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map(
      (r) =>
        `<tr>${r.map((c, i) => (i === 0 ? `<th scope="row">${esc(c ?? '–')}</th>` : `<td${isNumeric(c) ? ' class="num"' : ''}>${esc(c ?? '–')}</td>`)).join('')}</tr>`,
    )
    .join('')}</tbody></table></div>`;
}

/** Key/value list for a report's header (run id, snapshot, rubric, judge ...). */
export function factList(facts: Array<[string, string | number | null | undefined]>): string {
  return `<dl class="facts">${facts.map(([k, v]) => `<div><dt>${esc(k)}</dt><dd>${esc(v ?? '–')}</dd></div>`).join('')}</dl>`;
}

export function simulatedNote(simulated: boolean): string {
  return simulated
    ? '<p class="banner" role="note"><strong>Simulated run.</strong> Copilots and judge were played by judgeflow\'s local simulator (no LLM provider was called). The figures demonstrate the pipeline, not any product.</p>'
    : '';
}
