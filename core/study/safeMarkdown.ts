/**
 * Markdown → HTML for showing copilot answers to annotators, safe by construction: every piece of source text is
 * escaped, and the only tags in the output are the ones this renderer writes. Raw HTML shows as text, images become a
 * text placeholder (no remote fetches), and links are kept only for http(s) URLs. The page's Content-Security-Policy
 * forbids inline script as a second line of defence.
 */

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function safeHref(url: string): string | null {
  const u = url.trim();
  // eslint-disable-next-line no-control-regex
  if (!/^https?:\/\/[^\s\u0000-\u001f]+$/i.test(u)) return null;
  return u;
}

// A link target may hold one level of balanced parentheses, e.g. javascript:alert(1) or a Wikipedia URL.
const TARGET = String.raw`\(((?:[^()]|\([^()]*\))*)\)`;
const INLINE = new RegExp(
  String.raw`(\`+)([\s\S]*?)\1|!\[([^\]]*)\]` +
    TARGET +
    String.raw`|\[([^\]]+)\]` +
    TARGET +
    String.raw`|\*\*(.+?)\*\*|__(.+?)__|\*(\S(?:.*?\S)?)\*|\b_(\S(?:.*?\S)?)_\b`,
  'g',
);

export function renderInline(text: string): string {
  let out = '';
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    out += escapeHtml(text.slice(last, m.index));
    last = m.index! + m[0].length;
    if (m[1]) out += `<code>${escapeHtml(m[2])}</code>`;
    else if (m[4] !== undefined)
      out += `<span class="img-placeholder">[image${m[3] ? `: ${escapeHtml(m[3])}` : ''}]</span>`;
    else if (m[5] !== undefined) {
      const href = safeHref(m[6].split(/\s+/)[0] ?? '');
      out += href
        ? `<a href="${escapeHtml(href)}" rel="noopener noreferrer nofollow" target="_blank">${renderInline(m[5])}</a>`
        : renderInline(m[5]);
    } else if (m[7] !== undefined || m[8] !== undefined) out += `<strong>${renderInline(m[7] ?? m[8])}</strong>`;
    else out += `<em>${renderInline(m[9] ?? m[10])}</em>`;
  }
  return out + escapeHtml(text.slice(last));
}

const isTableRow = (line: string) => /^\s*\|.*\|\s*$/.test(line);
const isTableRule = (line: string) => /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/.test(line);
const cells = (line: string) =>
  line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim().replace(/\\\|/g, '|')); // `\|` is a pipe inside a cell

function nextNonBlank(lines: string[], from: number): string | undefined {
  for (let j = from + 1; j < lines.length; j++) if (lines[j].trim()) return lines[j];
  return undefined;
}

export function renderMarkdown(source: string): string {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (/^\s*```/.test(line)) {
      const body: string[] = [];
      for (i++; i < lines.length && !/^\s*```/.test(lines[i]); i++) body.push(lines[i]);
      i++;
      out.push(`<pre><code>${escapeHtml(body.join('\n'))}</code></pre>`);
      continue;
    }
    if (!line.trim()) {
      i++;
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    if (heading) {
      const level = Math.min(6, heading[1].length + 2); // answers' headings sit below the page's own
      out.push(`<h${level}>${renderInline(heading[2])}</h${level}>`);
      i++;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      out.push('<hr>');
      i++;
      continue;
    }
    if (isTableRow(line) && i + 1 < lines.length && isTableRule(lines[i + 1])) {
      const head = cells(line);
      const rows: string[][] = [];
      for (i += 2; i < lines.length && isTableRow(lines[i]); i++) rows.push(cells(lines[i]));
      out.push(
        `<table><thead><tr>${head.map((c) => `<th>${renderInline(c)}</th>`).join('')}</tr></thead><tbody>${rows
          .map((r) => `<tr>${r.map((c) => `<td>${renderInline(c)}</td>`).join('')}</tr>`)
          .join('')}</tbody></table>`,
      );
      continue;
    }
    const listKind = /^\s*[-*+]\s+/.test(line) ? 'ul' : /^\s*\d+[.)]\s+/.test(line) ? 'ol' : null;
    if (listKind) {
      const marker = listKind === 'ul' ? /^\s*[-*+]\s+/ : /^\s*\d+[.)]\s+/;
      const entries: string[] = [];
      for (; i < lines.length; i++) {
        if (marker.test(lines[i])) entries.push(lines[i].replace(marker, ''));
        else if (/^\s{2,}\S/.test(lines[i]) && entries.length) entries[entries.length - 1] += ` ${lines[i].trim()}`;
        // A blank line between items ("1. a", "", "2. b", as LLMs often write) keeps one list, so its numbering holds.
        else if (!lines[i].trim() && nextNonBlank(lines, i) !== undefined && marker.test(nextNonBlank(lines, i)!))
          continue;
        else break;
      }
      // An ordered list keeps the number it starts at: one interrupted by a paragraph or a sub-list resumes at its own number.
      const start = listKind === 'ol' ? Number(/^\s*(\d+)/.exec(line)![1]) : 1;
      const open = start !== 1 ? `<ol start="${start}">` : `<${listKind}>`;
      out.push(`${open}${entries.map((e) => `<li>${renderInline(e)}</li>`).join('')}</${listKind}>`);
      continue;
    }
    if (/^\s*>/.test(line)) {
      const quoted: string[] = [];
      for (; i < lines.length && /^\s*>/.test(lines[i]); i++) quoted.push(lines[i].replace(/^\s*>\s?/, ''));
      out.push(`<blockquote>${renderMarkdown(quoted.join('\n'))}</blockquote>`);
      continue;
    }
    const para: string[] = [];
    for (
      ;
      i < lines.length &&
      lines[i].trim() &&
      !/^(#{1,6}\s|\s*```|\s*[-*+]\s+|\s*\d+[.)]\s+|\s*>)/.test(lines[i]) &&
      !isTableRow(lines[i]);
      i++
    )
      para.push(lines[i].trim());
    if (!para.length) {
      // A line no block rule took (e.g. a lone table row): show it as a paragraph rather than loop.
      para.push(lines[i].trim());
      i++;
    }
    out.push(`<p>${para.map(renderInline).join('<br>')}</p>`);
  }
  return out.join('\n');
}
