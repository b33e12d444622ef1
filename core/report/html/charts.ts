/**
 * Inline SVG charts, generated here so the report needs no charting library and no network.
 * Every mark carries its exact figure in `data-value` (the report.json number) and every chart comes with
 * a text equivalent: an aria description on the SVG and the same numbers as a table under it.
 */
import { dataTable, esc, num } from './page';

/** Okabe–Ito: distinguishable with the common colour-vision deficiencies. */
export const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#000000'];
export const colourOf = (i: number) => PALETTE[i % PALETTE.length];

const attr = (name: string, value: unknown) =>
  value === null || value === undefined ? '' : ` ${name}="${esc(value)}"`;
const raw = (x: number | null | undefined) => (x === null || x === undefined || !Number.isFinite(x) ? '' : String(x));

function figure(id: string, title: string, description: string, svg: string, table: string, legend = ''): string {
  const labelled = svg
    .replace('<svg ', `<svg role="img" aria-labelledby="${esc(id)}-title ${esc(id)}-desc" `)
    .replace('>', `><desc id="${esc(id)}-desc">${esc(description)}</desc>`);
  return `<figure id="${esc(id)}" class="chart-figure"><figcaption id="${esc(id)}-title">${esc(title)}</figcaption>${legend}<div class="chart-scroll">${labelled}</div><details class="text-equivalent"><summary>Show the numbers as a table</summary>${table}</details></figure>`;
}

function legendOf(series: string[]): string {
  return `<div class="legend" aria-hidden="true">${series.map((s, i) => `<span style="--swatch:${colourOf(i)}">${esc(s)}</span>`).join('')}</div>`;
}

/** The smallest 1, 2 or 5 × 10^k at or above x: axis ends that give round tick labels. */
export function niceCeil(x: number): number {
  if (x <= 0) return 1;
  const k = Math.pow(10, Math.floor(Math.log10(x)));
  return [1, 2, 5, 10].map((m) => m * k).find((v) => v >= x - 1e-12)!;
}

/** Whole ticks print whole; others keep what precision they need (at most two decimals). */
const tickText = (t: number) =>
  Math.abs(t - Math.round(t)) < 1e-9 ? String(Math.round(t)) : String(Number(t.toFixed(2)));

function ticks(min: number, max: number, count = 5): number[] {
  const step = (max - min) / count;
  return Array.from({ length: count + 1 }, (_, k) => min + k * step);
}

/**
 * Axis labels (copilot and dimension names) of any length: the label column is as wide as the longest label needs
 * (about CHAR_PX a character at the charts' 12 px), a label longer than LABEL_LINE_CHARS wraps onto a second line, and
 * one longer than two lines ends in "…" with the whole name in its tooltip (the table under the chart has it too).
 */
const CHAR_PX = 7;
const LABEL_LINE_CHARS = 44;
const MIN_LABEL_PX = 170;

export function wrapLabel(text: string, lineChars = LABEL_LINE_CHARS, maxLines = 2): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > lineChars) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line || !lines.length) lines.push(line);
  // A single word longer than a line is cut too.
  const cut = lines.map((l) => (l.length > lineChars ? `${l.slice(0, lineChars - 1)}…` : l));
  if (cut.length <= maxLines) return cut;
  const last = cut.slice(maxLines - 1).join(' ');
  return [...cut.slice(0, maxLines - 1), last.length > lineChars ? `${last.slice(0, lineChars - 1)}…` : last];
}

/** The width of a right-aligned label column that holds every label (wrapped as wrapLabel wraps them). */
export function labelColumnWidth(labels: string[]): number {
  const longest = Math.max(0, ...labels.flatMap((l) => wrapLabel(l)).map((l) => l.length));
  return Math.max(MIN_LABEL_PX, longest * CHAR_PX + 16);
}

/** A label as SVG text, one tspan per line, centred on `y` (the baseline of a one-line label). */
function labelText(
  x: number,
  y: number,
  text: string,
  anchor: 'end' | 'middle' = 'end',
  lineChars = LABEL_LINE_CHARS,
): string {
  const lines = wrapLabel(text, lineChars);
  const first = y - ((lines.length - 1) * 13) / 2;
  const tooltip = lines.join(' ') !== text ? `<title>${esc(text)}</title>` : '';
  return `<text x="${x}" y="${first}" text-anchor="${anchor}">${tooltip}${lines.map((l, i) => `<tspan x="${x}" dy="${i ? 13 : 0}">${esc(l)}</tspan>`).join('')}</text>`;
}

export interface IntervalItem {
  label: string;
  value: number | null;
  low?: number | null;
  high?: number | null;
  /** Shown after the label (e.g. "tier A", "significant"). */
  note?: string;
  /** Marks a significant result (drawn filled) in a forest plot. */
  emphasis?: boolean;
}

/** Horizontal bars (or points, for a forest plot) with 95% interval whiskers, one row per item. */
export function intervalChart(o: {
  id: string;
  title: string;
  items: IntervalItem[];
  domain: [number, number];
  digits?: number;
  /** 'bar' for a leaderboard, 'point' for a forest plot (with a zero line). */
  mark?: 'bar' | 'point';
  valueName?: string;
}): string {
  const digits = o.digits ?? 1;
  const [min, max] = o.domain;
  const labelOf = (it: IntervalItem) => `${it.label}${it.note ? ` (${it.note})` : ''}`;
  const labelW = labelColumnWidth(o.items.map(labelOf));
  const plotW = 520;
  const rowH = 30;
  const top = 10;
  const height = top + o.items.length * rowH + 30;
  const x = (v: number) => labelW + ((Math.max(min, Math.min(max, v)) - min) / (max - min || 1)) * plotW;
  const grid = ticks(min, max)
    .map(
      (t) =>
        `<line class="grid" x1="${x(t)}" x2="${x(t)}" y1="${top}" y2="${top + o.items.length * rowH}"/><text x="${x(t)}" y="${top + o.items.length * rowH + 16}" text-anchor="middle">${tickText(t)}</text>`,
    )
    .join('');
  const zero =
    o.mark === 'point' && min < 0 && max > 0
      ? `<line class="zero" x1="${x(0)}" x2="${x(0)}" y1="${top}" y2="${top + o.items.length * rowH}"/>`
      : '';
  const rows = o.items
    .map((it, i) => {
      const y = top + i * rowH;
      const mid = y + rowH / 2;
      const label = labelText(labelW - 8, mid + 4, labelOf(it));
      if (it.value === null)
        return `<g class="mark" data-label="${esc(it.label)}" data-value="">${label}<text x="${labelW + 4}" y="${mid + 4}" class="muted">no data</text></g>`;
      const whisker =
        it.low !== null && it.low !== undefined && it.high !== null && it.high !== undefined
          ? `<line class="whisker" x1="${x(it.low)}" x2="${x(it.high)}" y1="${mid}" y2="${mid}"/><line class="whisker" x1="${x(it.low)}" x2="${x(it.low)}" y1="${mid - 6}" y2="${mid + 6}"/><line class="whisker" x1="${x(it.high)}" x2="${x(it.high)}" y1="${mid - 6}" y2="${mid + 6}"/>`
          : '';
      const body =
        o.mark === 'point'
          ? `<circle cx="${x(it.value)}" cy="${mid}" r="6" fill="${it.emphasis ? colourOf(0) : '#fff'}" stroke="${colourOf(0)}" stroke-width="2"/>`
          : `<rect x="${labelW}" y="${y + 6}" width="${Math.max(0, x(it.value) - labelW)}" height="${rowH - 12}" fill="${colourOf(0)}" opacity="0.8"/>`;
      const valueText = `<text x="${labelW + plotW + 6}" y="${mid + 4}" class="value">${num(it.value, digits)}</text>`;
      return `<g class="mark" data-label="${esc(it.label)}" data-value="${raw(it.value)}"${attr('data-low', raw(it.low))}${attr('data-high', raw(it.high))}>${label}${body}${whisker}${valueText}</g>`;
    })
    .join('');
  const svg = `<svg class="chart" viewBox="0 0 ${labelW + plotW + 60} ${height}" xmlns="http://www.w3.org/2000/svg">${grid}${zero}${rows}</svg>`;
  const valueName = o.valueName ?? 'value';
  const description = o.items
    .map(
      (it) =>
        `${it.label}${it.note ? ` (${it.note})` : ''}: ${valueName} ${num(it.value, digits)}${it.low !== undefined && it.low !== null ? `, 95% interval ${num(it.low, digits)} to ${num(it.high, digits)}` : ''}`,
    )
    .join('; ');
  const table = dataTable(
    o.title,
    ['', valueName, '95% low', '95% high', ...(o.items.some((i) => i.note) ? ['note'] : [])],
    o.items.map((it) => [
      it.label,
      num(it.value, digits),
      num(it.low, digits),
      num(it.high, digits),
      ...(o.items.some((i) => i.note) ? [it.note ?? ''] : []),
    ]),
  );
  return figure(o.id, o.title, description, svg, table);
}

/** Grouped horizontal bars: for each group (e.g. a dimension) one bar per series (e.g. a copilot). */
export function groupedBars(o: {
  id: string;
  title: string;
  groups: string[];
  groupNames?: string[];
  series: string[];
  values: Array<Array<number | null>>;
  domain: [number, number];
  digits?: number;
}): string {
  const digits = o.digits ?? 1;
  const [min, max] = o.domain;
  const labelW = labelColumnWidth(o.groups.map((g, gi) => o.groupNames?.[gi] ?? g));
  const plotW = 520;
  const barH = 12;
  const groupH = o.series.length * barH + 12;
  const top = 6;
  const height = top + o.groups.length * groupH + 24;
  const x = (v: number) => labelW + ((Math.max(min, Math.min(max, v)) - min) / (max - min || 1)) * plotW;
  const grid = ticks(min, max)
    .map(
      (t) =>
        `<line class="grid" x1="${x(t)}" x2="${x(t)}" y1="${top}" y2="${height - 24}"/><text x="${x(t)}" y="${height - 8}" text-anchor="middle">${num(t, 0)}</text>`,
    )
    .join('');
  const bars = o.groups
    .map((g, gi) => {
      const y0 = top + gi * groupH;
      const label = labelText(labelW - 8, y0 + groupH / 2, o.groupNames?.[gi] ?? g);
      return (
        label +
        o.series
          .map((s, si) => {
            const v = o.values[gi][si];
            const y = y0 + 4 + si * barH;
            return `<g class="mark" data-group="${esc(g)}" data-series="${esc(s)}" data-value="${raw(v)}"><rect x="${labelW}" y="${y}" width="${v === null ? 0 : Math.max(0, x(v) - labelW)}" height="${barH - 2}" fill="${colourOf(si)}"><title>${esc(s)} · ${esc(g)}: ${num(v, digits)}</title></rect><text x="${v === null ? labelW + 4 : x(v) + 4}" y="${y + barH - 3}" font-size="10">${num(v, digits)}</text></g>`;
          })
          .join('')
      );
    })
    .join('');
  const svg = `<svg class="chart" viewBox="0 0 ${labelW + plotW + 50} ${height}" xmlns="http://www.w3.org/2000/svg">${grid}${bars}</svg>`;
  const description = o.series
    .map((s, si) => `${s}: ${o.groups.map((g, gi) => `${g} ${num(o.values[gi][si], digits)}`).join(', ')}`)
    .join('; ');
  const table = dataTable(
    o.title,
    ['', ...o.series],
    o.groups.map((g, gi) => [o.groupNames?.[gi] ?? g, ...o.series.map((_, si) => num(o.values[gi][si], digits))]),
  );
  return figure(o.id, o.title, description, svg, table, legendOf(o.series));
}

/** One stacked horizontal bar per row: e.g. how often a system was ranked 1st, 2nd, ... */
export function stackedBars(o: {
  id: string;
  title: string;
  rows: Array<{ label: string; parts: number[] }>;
  partNames: string[];
}): string {
  const labelW = labelColumnWidth(o.rows.map((r) => r.label));
  const plotW = 520;
  const rowH = 28;
  const height = o.rows.length * rowH + 10;
  const bars = o.rows
    .map((r, i) => {
      const total = r.parts.reduce((a, b) => a + b, 0) || 1;
      let offset = 0;
      const y = 5 + i * rowH;
      const parts = r.parts
        .map((p, k) => {
          const w = (p / total) * plotW;
          const seg = `<g class="mark" data-label="${esc(r.label)}" data-part="${k}" data-value="${p}"><rect x="${labelW + offset}" y="${y + 3}" width="${w}" height="${rowH - 8}" fill="${colourOf(k)}"><title>${esc(r.label)} · ${esc(o.partNames[k])}: ${p}</title></rect>${w > 18 ? `<text x="${labelW + offset + w / 2}" y="${y + rowH / 2 + 3}" text-anchor="middle" fill="#fff" style="fill:#fff">${p}</text>` : ''}</g>`;
          offset += w;
          return seg;
        })
        .join('');
      return `${labelText(labelW - 8, y + rowH / 2 + 3, r.label)}${parts}`;
    })
    .join('');
  const svg = `<svg class="chart" viewBox="0 0 ${labelW + plotW + 20} ${height}" xmlns="http://www.w3.org/2000/svg">${bars}</svg>`;
  const description = o.rows
    .map((r) => `${r.label}: ${r.parts.map((p, k) => `${o.partNames[k]} ${p}`).join(', ')}`)
    .join('; ');
  const table = dataTable(
    o.title,
    ['', ...o.partNames],
    o.rows.map((r) => [r.label, ...r.parts]),
  );
  return figure(o.id, o.title, description, svg, table, legendOf(o.partNames));
}

/** Vertical bars, one per category (e.g. position), with an optional reference tick per bar (e.g. the chance level). */
export function columnChart(o: {
  id: string;
  title: string;
  labels: string[];
  values: Array<number | null>;
  reference?: Array<number | null>;
  referenceName?: string;
  domain: [number, number];
  digits?: number;
  valueName: string;
}): string {
  const digits = o.digits ?? 2;
  const [min, max] = o.domain;
  const w = 420;
  const left = 40;
  const colW = (w - left) / Math.max(1, o.labels.length);
  const colChars = Math.max(4, Math.floor(colW / CHAR_PX));
  const twoLines = o.labels.some((l) => wrapLabel(l, colChars).length > 1);
  const h = twoLines ? 213 : 200;
  const y = (v: number) => 10 + (1 - (Math.max(min, Math.min(max, v)) - min) / (max - min || 1)) * (200 - 40);
  const axis = ticks(min, max, 4)
    .map(
      (t) =>
        `<line class="grid" x1="${left}" x2="${w}" y1="${y(t)}" y2="${y(t)}"/><text x="${left - 4}" y="${y(t) + 4}" text-anchor="end">${num(t, digits > 1 ? 2 : 0)}</text>`,
    )
    .join('');
  const cols = o.labels
    .map((label, i) => {
      const v = o.values[i];
      const x0 = left + i * colW + colW * 0.2;
      const ref = o.reference?.[i];
      return `<g class="mark" data-label="${esc(label)}" data-value="${raw(v)}"${attr('data-reference', raw(ref ?? null))}>${v === null ? '' : `<rect x="${x0}" y="${y(v)}" width="${colW * 0.6}" height="${y(min) - y(v)}" fill="${colourOf(0)}" opacity="0.85"/><text x="${x0 + colW * 0.3}" y="${y(v) - 4}" text-anchor="middle">${num(v, digits)}</text>`}${
        ref !== null && ref !== undefined
          ? `<line x1="${x0 - 4}" x2="${x0 + colW * 0.6 + 4}" y1="${y(ref)}" y2="${y(ref)}" stroke="${colourOf(5)}" stroke-width="2.5" stroke-dasharray="5 3"/>`
          : ''
      }${twoLines ? labelText(x0 + colW * 0.3, 200 - 14 + 6.5, label, 'middle', colChars) : `<text x="${x0 + colW * 0.3}" y="${200 - 14}" text-anchor="middle">${esc(label)}</text>`}</g>`;
    })
    .join('');
  const svg = `<svg class="chart small" style="max-width:480px" viewBox="0 0 ${w + 10} ${h}" xmlns="http://www.w3.org/2000/svg">${axis}${cols}</svg>`;
  const description = o.labels
    .map(
      (l, i) =>
        `${l}: ${o.valueName} ${num(o.values[i], digits)}${o.reference ? `, ${o.referenceName} ${num(o.reference[i], digits)}` : ''}`,
    )
    .join('; ');
  const table = dataTable(
    o.title,
    ['', o.valueName, ...(o.reference ? [o.referenceName ?? 'reference'] : [])],
    o.labels.map((l, i) => [l, num(o.values[i], digits), ...(o.reference ? [num(o.reference[i], digits)] : [])]),
  );
  const legend = o.reference
    ? `<div class="legend" aria-hidden="true"><span style="--swatch:${colourOf(0)}">${esc(o.valueName)}</span><span style="--swatch:${colourOf(5)}">${esc(o.referenceName ?? 'reference')} (dashed)</span></div>`
    : '';
  return figure(o.id, o.title, description, svg, table, legend);
}

/**
 * A heatmap is an HTML table with shaded cells and the value written in each cell: readable by screen
 * readers as it is, so it is its own text equivalent.
 */
export function heatmap(o: {
  id: string;
  title: string;
  rowHeader: string;
  rows: string[];
  rowNames?: string[];
  cols: string[];
  values: Array<Array<number | null>>;
  domain: [number, number];
  digits?: number;
  diverging?: boolean;
  cellNote?: (r: number, c: number) => string;
}): string {
  const digits = o.digits ?? 1;
  const [min, max] = o.domain;
  const shade = (v: number | null) => {
    if (v === null || !Number.isFinite(v)) return 'background:#f6f8fa;color:#57606a';
    if (o.diverging) {
      const t = Math.max(-1, Math.min(1, v / (Math.max(Math.abs(min), Math.abs(max)) || 1)));
      const a = Math.abs(t);
      return t >= 0
        ? `background:rgba(26,127,55,${(a * 0.75).toFixed(3)});color:${a > 0.6 ? '#fff' : '#1b1f24'}`
        : `background:rgba(180,35,24,${(a * 0.75).toFixed(3)});color:${a > 0.6 ? '#fff' : '#1b1f24'}`;
    }
    const t = Math.max(0, Math.min(1, (v - min) / (max - min || 1)));
    return `background:rgba(11,87,208,${(0.08 + t * 0.72).toFixed(3)});color:${t > 0.55 ? '#fff' : '#1b1f24'}`;
  };
  const body = o.rows
    .map(
      (r, ri) =>
        `<tr><th scope="row">${esc(o.rowNames?.[ri] ?? r)}</th>${o.cols
          .map((c, ci) => {
            const v = o.values[ri][ci];
            const note = o.cellNote?.(ri, ci) ?? '';
            return `<td class="mark" data-row="${esc(r)}" data-col="${esc(c)}" data-value="${raw(v)}" style="${shade(v)}">${num(v, digits)}${note ? esc(note) : ''}</td>`;
          })
          .join('')}</tr>`,
    )
    .join('');
  // The title is the figure's caption (a table caption would wrap to the table's width).
  return `<figure id="${esc(o.id)}" class="chart-figure"><figcaption id="${esc(o.id)}-title">${esc(o.title)}</figcaption><div class="table-wrap"><table class="heatmap" aria-labelledby="${esc(o.id)}-title"><thead><tr><th scope="col">${esc(o.rowHeader)}</th>${o.cols
    .map((c) => `<th scope="col">${esc(c)}</th>`)
    .join('')}</tr></thead><tbody>${body}</tbody></table></div></figure>`;
}

export interface LinePoint {
  value: number | null;
  low?: number | null;
  high?: number | null;
  /** Drawn as a marked point (e.g. a significant regression against the previous run). */
  flagged?: boolean;
}

/**
 * One line per series over ordered x labels (e.g. a copilot's score over a schedule's runs), its 95% intervals as a
 * translucent band, flagged points ringed in red with a downward triangle.
 */
export function lineChart(o: {
  id: string;
  title: string;
  labels: string[];
  series: string[];
  points: LinePoint[][];
  domain: [number, number];
  digits?: number;
  valueName: string;
  flagName?: string;
}): string {
  const digits = o.digits ?? 1;
  const [min, max] = o.domain;
  const left = 50;
  const plotW = 640;
  const plotH = 240;
  const top = 10;
  const x = (i: number) => left + (o.labels.length > 1 ? (i / (o.labels.length - 1)) * plotW : plotW / 2);
  const y = (v: number) => top + plotH - ((Math.max(min, Math.min(max, v)) - min) / (max - min || 1)) * plotH;
  const grid = ticks(min, max)
    .map(
      (t) =>
        `<line class="grid" x1="${left}" x2="${left + plotW}" y1="${y(t)}" y2="${y(t)}"/><text x="${left - 6}" y="${y(t) + 4}" text-anchor="end">${tickText(t)}</text>`,
    )
    .join('');
  const xLabels = o.labels
    .map((l, i) => `<text x="${x(i)}" y="${top + plotH + 16}" text-anchor="middle" font-size="10">${esc(l)}</text>`)
    .join('');
  const layers = o.series
    .map((s, si) => {
      const pts = o.points[si];
      const colour = colourOf(si);
      const banded = pts
        .map((p, i) => ({ p, i }))
        .filter(({ p }) => p.value !== null && p.low != null && p.high != null);
      const band =
        banded.length > 1
          ? `<polygon class="band" fill="${colour}" fill-opacity="0.15" stroke="none" points="${[...banded.map(({ p, i }) => `${x(i)},${y(p.high!)}`), ...[...banded].reverse().map(({ p, i }) => `${x(i)},${y(p.low!)}`)].join(' ')}"/>`
          : '';
      const line = `<polyline fill="none" stroke="${colour}" stroke-width="2" points="${pts.flatMap((p, i) => (p.value === null ? [] : [`${x(i)},${y(p.value)}`])).join(' ')}"/>`;
      const marks = pts
        .map((p, i) =>
          p.value === null
            ? ''
            : `<g class="mark" data-series="${esc(s)}" data-label="${esc(o.labels[i])}" data-value="${raw(p.value)}"${attr('data-low', raw(p.low))}${attr('data-high', raw(p.high))}${p.flagged ? ' data-flagged="true"' : ''}><circle cx="${x(i)}" cy="${y(p.value)}" r="4" fill="${colour}"><title>${esc(s)} · ${esc(o.labels[i])}: ${num(p.value, digits)}${p.flagged ? ` (${esc(o.flagName ?? 'flagged')})` : ''}</title></circle>${
                p.flagged
                  ? `<circle cx="${x(i)}" cy="${y(p.value)}" r="8" fill="none" stroke="#D55E00" stroke-width="2"/><path d="M${x(i) - 5},${y(p.value) + 12} h10 l-5,8 z" fill="#D55E00"/>`
                  : ''
              }</g>`,
        )
        .join('');
      return band + line + marks;
    })
    .join('');
  const svg = `<svg class="chart" viewBox="0 0 ${left + plotW + 30} ${top + plotH + 26}" xmlns="http://www.w3.org/2000/svg">${grid}${xLabels}${layers}</svg>`;
  const description = o.series
    .map(
      (s, si) =>
        `${s}: ${o.points[si].map((p, i) => `${o.labels[i]} ${num(p.value, digits)}${p.flagged ? ` (${o.flagName ?? 'flagged'})` : ''}`).join(', ')}`,
    )
    .join('; ');
  const table = dataTable(
    o.title,
    ['', ...o.series.flatMap((s) => [`${s} ${o.valueName}`, `${s} 95% interval`])],
    o.labels.map((l, i) => [
      l,
      ...o.series.flatMap((_, si) => {
        const p = o.points[si][i];
        return [
          `${num(p.value, digits)}${p.flagged ? ` ▼ ${o.flagName ?? 'flagged'}` : ''}`,
          p.low != null ? `${num(p.low, digits)} – ${num(p.high, digits)}` : '–',
        ];
      }),
    ]),
  );
  return figure(o.id, o.title, description, svg, table, legendOf(o.series));
}
