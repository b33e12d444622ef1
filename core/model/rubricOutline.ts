/**
 * What a rubric version covers, and what changed between two versions — protocol-generic.
 *
 * A rubric's `content` (see core/model/protocol.ts LoadedRubric) is exactly what its version hashes, so both the
 * outline and the diff work on that content flattened to field paths. Arrays of objects with unique `id`s are
 * keyed by id (`data.dimensions[D2].description`) so a reordered or inserted item diffs as one change, not many.
 */
import type { LoadedRubric } from './protocol';
import { contentHash } from './hashing';

export type Leaf = string | number | boolean | null;

export function flattenContent(value: unknown, prefix = '', out = new Map<string, Leaf>()): Map<string, Leaf> {
  if (Array.isArray(value)) {
    if (value.length === 0) out.set(prefix, '[]');
    const ids = value.map((v) =>
      v && typeof v === 'object' && typeof (v as { id?: unknown }).id === 'string' ? (v as { id: string }).id : null,
    );
    const byId = ids.every((id) => id !== null) && new Set(ids).size === ids.length;
    value.forEach((v, i) => flattenContent(v, `${prefix}[${byId ? ids[i] : i}]`, out));
  } else if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    if (entries.length === 0) out.set(prefix, '{}');
    for (const [k, v] of entries) flattenContent(v, prefix ? `${prefix}.${k}` : k, out);
  } else {
    out.set(prefix, (value ?? null) as Leaf);
  }
  return out;
}

/** Long or multi-line texts are summarised by their hash in the outline; the diff shows them line by line. */
export function isLongText(v: Leaf): v is string {
  return typeof v === 'string' && (v.includes('\n') || v.length > 100);
}

export function textDigest(text: string): { sha256: string; lines: number; chars: number } {
  return { sha256: contentHash(text), lines: text.split('\n').length, chars: text.length };
}

export interface RubricOutline {
  protocol: string;
  version: string;
  dir: string;
  judge: LoadedRubric['judge'];
  /** Every labelled item under a `dimensions` list, plus labelled objects directly under the data (e.g. LATTICE's Refusal). */
  dimensions: Array<{ id: string; name: string; descriptionSha256: string | null }>;
  /** The content under any `weights` key, as stored. */
  weights: unknown;
  /** Prompt texts (`prompts.*` at the top of the content) by hash. */
  prompts: Record<string, { sha256: string; lines: number; chars: number }>;
  /** Every field the version covers; long texts as `sha256:… (N chars)`. */
  fields: Record<string, Leaf>;
}

const isObject = (v: unknown): v is Record<string, unknown> => Boolean(v) && typeof v === 'object' && !Array.isArray(v);
const isLabelled = (v: unknown): v is { id: string; name: string; description?: string } =>
  isObject(v) && typeof v.id === 'string' && typeof v.name === 'string';

export function rubricOutline(rubric: LoadedRubric): RubricOutline {
  const content = rubric.content;
  const data = isObject(content.data) ? content.data : content;
  const dimensions: RubricOutline['dimensions'] = [];
  let weights: unknown = null;
  const visit = (value: unknown, key: string) => {
    if (key === 'dimensions' && Array.isArray(value))
      value.filter(isLabelled).forEach((d) => dimensions.push(describeDimension(d)));
    if (key === 'weights' && weights === null) weights = value;
    if (isObject(value)) for (const [k, v] of Object.entries(value)) visit(v, k);
  };
  visit(content, '');
  for (const v of Object.values(data))
    if (isLabelled(v) && typeof v.description === 'string') dimensions.push(describeDimension(v));
  const prompts: RubricOutline['prompts'] = {};
  if (isObject(content.prompts))
    for (const [k, v] of Object.entries(content.prompts)) if (typeof v === 'string') prompts[k] = textDigest(v);
  const fields: Record<string, Leaf> = {};
  for (const [k, v] of flattenContent(content))
    fields[k] = isLongText(v) ? `sha256:${contentHash(v)} (${v.length} chars)` : v;
  return {
    protocol: rubric.protocol,
    version: rubric.version,
    dir: rubric.dir,
    judge: rubric.judge,
    dimensions,
    weights,
    prompts,
    fields,
  };
}

function describeDimension(d: { id: string; name: string; description?: string }) {
  return {
    id: d.id,
    name: d.name,
    descriptionSha256: typeof d.description === 'string' ? contentHash(d.description) : null,
  };
}

export function renderOutline(o: RubricOutline): string {
  const lines = [
    `${o.protocol} rubric version ${o.version}`,
    `  directory: ${o.dir}`,
    `  judge: ${Object.entries(o.judge)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  ];
  lines.push(
    `  dimensions (${o.dimensions.length}):`,
    ...o.dimensions.map(
      (d) => `    ${d.id}  ${d.name}${d.descriptionSha256 ? `  (description sha256 ${d.descriptionSha256})` : ''}`,
    ),
  );
  if (isObject(o.weights)) {
    lines.push('  weights:');
    for (const [k, v] of Object.entries(o.weights))
      lines.push(
        `    ${k}: ${
          isObject(v)
            ? Object.entries(v)
                .map(([d, w]) => `${d} ${w}`)
                .join(', ')
            : JSON.stringify(v)
        }`,
      );
  }
  lines.push(
    '  prompts:',
    ...Object.entries(o.prompts).map(([k, p]) => `    ${k}  sha256 ${p.sha256}  ${p.lines} lines, ${p.chars} chars`),
  );
  const groups = new Map<string, number>();
  for (const path of Object.keys(o.fields)) {
    const group = path.replace(/^data\./, '').split(/[.[]/)[0];
    groups.set(group, (groups.get(group) ?? 0) + 1);
  }
  lines.push(
    `  covers ${Object.keys(o.fields).length} fields: ${[...groups].map(([g, n]) => `${g} (${n})`).join(', ')}`,
  );
  return lines.join('\n');
}

// ---- diff ---------------------------------------------------------------------------------------------

export type DiffLine = { op: ' ' | '-' | '+'; text: string };

export interface FieldChange {
  path: string;
  kind: 'added' | 'removed' | 'changed';
  a?: Leaf;
  b?: Leaf;
  /** Line diff, for changed texts. */
  lines?: DiffLine[];
}

/** Line diff by longest common subsequence; rubric texts are small, so O(n·m) is fine (with a cap). */
export function lineDiff(a: string, b: string): DiffLine[] {
  const x = a.split('\n');
  const y = b.split('\n');
  if (x.length * y.length > 4_000_000)
    return [...x.map((text) => ({ op: '-' as const, text })), ...y.map((text) => ({ op: '+' as const, text }))];
  // lcs[i][j] = LCS length of x[i..] and y[j..]
  const lcs = Array.from({ length: x.length + 1 }, () => new Array<number>(y.length + 1).fill(0));
  for (let i = x.length - 1; i >= 0; i--)
    for (let j = y.length - 1; j >= 0; j--)
      lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < x.length && j < y.length) {
    if (x[i] === y[j]) {
      out.push({ op: ' ', text: x[i] });
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) out.push({ op: '-', text: x[i++] });
    else out.push({ op: '+', text: y[j++] });
  }
  while (i < x.length) out.push({ op: '-', text: x[i++] });
  while (j < y.length) out.push({ op: '+', text: y[j++] });
  return out;
}

/** Field-by-field changes from content `a` to content `b`, in `a`'s field order, then fields only `b` has. */
export function diffContent(a: unknown, b: unknown): FieldChange[] {
  const fa = flattenContent(a);
  const fb = flattenContent(b);
  const changes: FieldChange[] = [];
  for (const [path, va] of fa) {
    if (!fb.has(path)) changes.push({ path, kind: 'removed', a: va });
    else {
      const vb = fb.get(path)!;
      if (va === vb) continue;
      const change: FieldChange = { path, kind: 'changed', a: va, b: vb };
      if (typeof va === 'string' && typeof vb === 'string' && (isLongText(va) || isLongText(vb)))
        change.lines = lineDiff(va, vb);
      changes.push(change);
    }
  }
  for (const [path, vb] of fb) if (!fa.has(path)) changes.push({ path, kind: 'added', b: vb });
  return changes;
}

/** Unchanged stretches longer than 2 × context lines are folded. */
export function renderLineDiff(lines: DiffLine[], context = 2, indent = '    '): string[] {
  const out: string[] = [];
  const changed = lines.map((l) => l.op !== ' ');
  const near = (k: number) => changed.slice(Math.max(0, k - context), k + context + 1).some(Boolean);
  let folded = 0;
  lines.forEach((l, k) => {
    if (near(k)) {
      if (folded) out.push(`${indent}  … ${folded} unchanged line${folded === 1 ? '' : 's'}`);
      folded = 0;
      out.push(`${indent}${l.op} ${l.text}`);
    } else folded++;
  });
  if (folded) out.push(`${indent}  … ${folded} unchanged line${folded === 1 ? '' : 's'}`);
  return out;
}

const show = (v: Leaf | undefined) => (typeof v === 'string' ? JSON.stringify(v) : String(v));

export function renderDiff(
  a: { label: string; version: string },
  b: { label: string; version: string },
  changes: FieldChange[],
): string {
  const head = `rubric ${a.version} (${a.label}) → ${b.version} (${b.label})`;
  if (changes.length === 0) return `${head}\n  no changes`;
  const lines = [head, `  ${changes.length} field${changes.length === 1 ? '' : 's'} changed`];
  for (const c of changes) {
    if (c.kind === 'added') lines.push(`+ ${c.path}: ${show(c.b)}`);
    else if (c.kind === 'removed') lines.push(`- ${c.path}: ${show(c.a)}`);
    else if (c.lines) lines.push(`~ ${c.path}:`, ...renderLineDiff(c.lines));
    else lines.push(`~ ${c.path}: ${show(c.a)} → ${show(c.b)}`);
  }
  return lines.join('\n');
}
