/**
 * Writes docs/configuration.md from the zod schemas a run config is validated with, so the reference cannot drift
 * from the code: every key, its type, default and the one line of meaning its `.describe()` gives.
 *
 *   npx tsx scripts/config-reference.ts          (or: npm run docs)
 *
 * test/client/configReference.test.ts fails when the committed file differs from what this renders.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { adapterModules } from '../activities/adapters';
import { copilotBaseShape } from '../activities/adapters/common';
import { runConfigSchema } from '../client/config';
import { judgeConfigSchema, panelJudgeSchema, panelOptionsSchema } from '../core/llm/judgeConfig';
import { protocols } from '../rubrics';

export const CONFIGURATION_MD = path.join(__dirname, '..', 'docs', 'configuration.md');
export const REGENERATE_COMMAND = 'npm run docs';

/** The part of a JSON Schema (draft 2020-12, as z.toJSONSchema writes it) this page reads. */
interface JsonSchema {
  type?: string | string[];
  description?: string;
  default?: unknown;
  const?: unknown;
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  not?: JsonSchema;
  $ref?: string;
}

interface Row {
  key: string;
  type: string;
  default: string;
  meaning: string;
}

// Input shapes: what a user writes (a key with a default is optional to write).
const jsonSchemaOf = (schema: z.ZodType): JsonSchema =>
  z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;

const code = (value: unknown) => '`' + JSON.stringify(value) + '`';
// Table cells: a pipe would end the cell, and `<output>` would be read as an HTML tag.
const cell = (text: string) =>
  text
    .replace(/\|/g, '\\|')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\s*\n\s*/g, ' ');

const variantsOf = (node: JsonSchema) => node.anyOf ?? node.oneOf;
const isObject = (node: JsonSchema) => node.type === 'object' || node.properties !== undefined;
const isNull = (node: JsonSchema) => node.type === 'null';
const isRecord = (node: JsonSchema) =>
  isObject(node) && !node.properties && typeof node.additionalProperties === 'object';

/** GitHub's anchor for a heading. */
const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');

function range(lo: number | undefined, hi: number | undefined, exclusiveLo?: number): string {
  const top = hi !== undefined && hi < Number.MAX_SAFE_INTEGER ? hi : undefined;
  if (exclusiveLo !== undefined) return top === undefined ? ` > ${exclusiveLo}` : ` > ${exclusiveLo}, ≤ ${top}`;
  if (lo !== undefined && top !== undefined) return ` ${lo}–${top}`;
  if (lo !== undefined) return ` ≥ ${lo}`;
  if (top !== undefined) return ` ≤ ${top}`;
  return '';
}

/** A key's type in a few words: `integer 1–64`, `"none" | "sse"`, `list of object (2–12)`, `number 0–2 or null`. */
export function typeText(node: JsonSchema): string {
  if (node.$ref) return 'any JSON value';
  if (node.not) return 'removed: any value is an error';
  if (node.const !== undefined) return code(node.const);
  if (node.enum) return node.enum.map(code).join(' | ');
  const variants = variantsOf(node);
  if (variants) {
    const nonNull = variants.filter((v) => !isNull(v));
    const tags = nonNull.map((v) => v.properties?.type?.const);
    if (nonNull.length > 1 && tags.every((t) => typeof t === 'string'))
      return `object, by type: ${tags.map(code).join(' | ')}`;
    const alternatives =
      nonNull.every(isObject) && nonNull.length > 1
        ? `one of ${nonNull.map((v) => '{' + Object.keys(v.properties ?? {}).join(', ') + '}').join(', ')}`
        : nonNull.map(typeText).join(' or ');
    return nonNull.length < variants.length ? `${alternatives} or null` : alternatives;
  }
  switch (node.type) {
    case 'string':
      if (node.format === 'uri') return 'URL';
      if (node.pattern) return `string matching \`${node.pattern}\``;
      return node.minLength ? 'non-empty string' : 'string';
    case 'integer':
    case 'number':
      return node.type + range(node.minimum, node.maximum, node.exclusiveMinimum);
    case 'boolean':
      return 'boolean';
    case 'array': {
      const count =
        node.maxItems !== undefined
          ? ` (${node.minItems ?? 0}–${node.maxItems})`
          : node.minItems
            ? ` (at least ${node.minItems})`
            : '';
      return `list of ${node.items ? typeText(node.items) : 'values'}${count}`;
    }
    case 'object':
      if (isRecord(node)) return `map of name → ${typeText(node.additionalProperties as JsonSchema)}`;
      return 'object';
    default:
      return 'any value';
  }
}

function defaultText(node: JsonSchema, required: boolean): string {
  if (node.default !== undefined) return code(node.default);
  return required ? 'required' : '—';
}

/**
 * One row per key of an object schema, then rows for the keys inside it: `a.b` for an object, `a[].b` for a list of
 * objects, `a.<name>.b` for a map, and each form's keys for a key that takes one of several object forms.
 * `links` replaces the expansion of a key with a pointer to the section (by heading) that documents it.
 */
export function rowsOf(node: JsonSchema, prefix = '', links: Record<string, string> = {}): Row[] {
  const rows: Row[] = [];
  const required = new Set(node.required ?? []);
  for (const [key, child] of Object.entries(node.properties ?? {})) {
    const name = prefix + key;
    const link = links[name];
    rows.push({
      key: name,
      type: link ? `${typeText(child)}, see [${link}](#${anchorOf(link)})` : typeText(child),
      default: defaultText(child, required.has(key)),
      meaning: child.description ?? '',
    });
    if (link) continue;
    rows.push(...nestedRows(child, name));
  }
  return rows;
}

function nestedRows(node: JsonSchema, name: string): Row[] {
  if (isRecord(node)) {
    const value = node.additionalProperties as JsonSchema;
    return isObject(value) ? rowsOf(value, `${name}.<name>.`) : [];
  }
  if (isObject(node)) return rowsOf(node, `${name}.`);
  if (node.type === 'array' && node.items) return nestedRows(node.items, `${name}[]`);
  const variants = variantsOf(node)?.filter(isObject) ?? [];
  return variants.flatMap((v) => rowsOf({ ...v, required: [] }, `${name}.`));
}

function table(rows: Row[]): string {
  const lines = ['| key | type | default | meaning |', '| --- | --- | --- | --- |'];
  for (const r of rows) lines.push(`| \`${r.key}\` | ${cell(r.type)} | ${cell(r.default)} | ${cell(r.meaning)} |`);
  return lines.join('\n');
}

/** Keys whose schema carries no `.describe()`: each should say what it means. */
export function undescribedKeys(): string[] {
  return sections()
    .flatMap((s) => s.rows)
    .filter((r) => !r.meaning)
    .map((r) => r.key);
}

interface Section {
  heading: string;
  intro: string;
  rows: Row[];
}

function sections(): Section[] {
  const run = jsonSchemaOf(runConfigSchema);
  const protocolLinks = Object.fromEntries(protocols.map((p) => [p.id, `protocol options: ${p.id}`]));
  const out: Section[] = [
    {
      heading: 'Run config (top level)',
      intro: 'The keys of the config file itself. A key marked required has no default; `—` means unset unless given.',
      rows: rowsOf(run, '', {
        judge: 'judge',
        judges: 'judges (a panel)',
        panel: 'judges (a panel)',
        copilots: 'copilots',
        ...protocolLinks,
      }).map((r) =>
        protocols.some((p) => p.id === r.key) && !r.meaning
          ? { ...r, meaning: `Options of protocol ${r.key}; allowed only when protocol is ${r.key}.` }
          : r,
      ),
    },
    {
      heading: 'judge',
      intro:
        'One judge: the endpoint and model that score the answers. Give `judge:` or `judges:`, exactly one of the two.',
      rows: rowsOf(jsonSchemaOf(judgeConfigSchema)),
    },
    {
      heading: 'judges (a panel)',
      intro:
        '`judges:` is a list of two to twelve members; every judge unit is judged by every member. A member takes every `judge:` key except `samples` (a panel has `panel.samples`), plus `name` and `family`.',
      rows: [
        ...rowsOf(jsonSchemaOf(panelJudgeSchema), 'judges[].'),
        ...rowsOf(jsonSchemaOf(panelOptionsSchema), 'panel.'),
      ],
    },
    {
      heading: 'copilots',
      intro:
        "Every copilot has these keys whatever its `type`; the limits are enforced by the run's workflow, so they hold across all workers. Each `type` adds its own keys (the sections below; details in [adapters.md](adapters.md)).",
      rows: rowsOf(jsonSchemaOf(z.object(copilotBaseShape)), 'copilots[].'),
    },
  ];
  const baseKeys = new Set(Object.keys(copilotBaseShape));
  for (const adapter of adapterModules) {
    const schema = jsonSchemaOf(adapter.configSchema);
    const own: JsonSchema = {
      ...schema,
      properties: Object.fromEntries(Object.entries(schema.properties ?? {}).filter(([k]) => !baseKeys.has(k))),
    };
    out.push({
      heading: `copilot type: ${adapter.type}`,
      intro: schema.properties?.type?.description ?? '',
      rows: rowsOf(own, 'copilots[].'),
    });
  }
  for (const protocol of protocols) {
    const rows = rowsOf(jsonSchemaOf(protocol.optionsSchema), `${protocol.id}.`);
    out.push({
      heading: `protocol options: ${protocol.id}`,
      intro: rows.length
        ? `The \`${protocol.id}:\` section, read only when \`protocol: ${protocol.id}\`.`
        : `Protocol \`${protocol.id}\` has no options of its own; a \`${protocol.id}:\` section must be empty.`,
      rows,
    });
  }
  return out;
}

/** The whole page, as docs/configuration.md holds it. */
export function renderConfigurationReference(): string {
  const all = sections();
  const parts = [
    '# Configuration reference',
    '',
    `<!-- Generated from the zod schemas by scripts/config-reference.ts: do not edit by hand; run \`${REGENERATE_COMMAND}\`. -->`,
    '',
    'A run config is YAML or JSON, validated before anything starts: an unknown key or a bad value is an error naming its path (`copilots.1.concurrency: …`), exit code 2. Paths are relative to the config file. Secrets never go in a config: `apiKeyEnv` and `${VAR}` name environment variables that only the worker reads.',
    '',
    "Every key below comes from the schema the config is checked with (`client/config.ts`, `core/llm/judgeConfig.ts`, each adapter's `configSchema` in `activities/adapters/`, each protocol's `optionsSchema` in `rubrics/`); the meaning is the key's `.describe()`. Rows like `a.b` are keys inside `a`, `a[].b` keys of each item of the list `a`.",
    '',
    ...all.map((s) => `- [${s.heading}](#${anchorOf(s.heading)})`),
    '',
  ];
  for (const s of all)
    parts.push(`## ${s.heading}`, '', ...(s.intro ? [s.intro, ''] : []), ...(s.rows.length ? [table(s.rows), ''] : []));
  return parts.join('\n');
}

if (require.main === module) {
  fs.mkdirSync(path.dirname(CONFIGURATION_MD), { recursive: true });
  fs.writeFileSync(CONFIGURATION_MD, renderConfigurationReference());
  const missing = undescribedKeys();
  console.log(`wrote ${path.relative(process.cwd(), CONFIGURATION_MD)}`);
  if (missing.length) console.error(`keys without a .describe(): ${missing.join(', ')}`);
}
