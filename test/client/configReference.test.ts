import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import {
  CONFIGURATION_MD,
  REGENERATE_COMMAND,
  renderConfigurationReference,
  rowsOf,
  typeText,
  undescribedKeys,
} from '../../scripts/config-reference';

const relative = path.relative(path.join(__dirname, '..', '..'), CONFIGURATION_MD);

test('docs/configuration.md is what the zod schemas render today', () => {
  const expected = renderConfigurationReference();
  const actual = fs.existsSync(CONFIGURATION_MD) ? fs.readFileSync(CONFIGURATION_MD, 'utf8') : null;
  if (actual === expected) return;
  const want = expected.split('\n');
  const have = (actual ?? '').split('\n');
  const line = want.findIndex((l, i) => have[i] !== l);
  throw new Error(
    actual === null
      ? `${relative} is missing; run \`${REGENERATE_COMMAND}\` (npx tsx scripts/config-reference.ts) and commit it`
      : `${relative} is stale (first difference at line ${line + 1}: expected ${JSON.stringify(want[line])}, found ${JSON.stringify(have[line])}); run \`${REGENERATE_COMMAND}\` (npx tsx scripts/config-reference.ts) and commit it`,
  );
});

test('every config key says what it means (a .describe() on its schema)', () => {
  expect(undescribedKeys()).toEqual([]);
});

test('a key is rendered with its type, default and meaning, and nested keys get dotted paths', () => {
  const schema = z
    .object({
      limit: z.number().int().min(1).max(64).default(4).describe('Most calls in flight.'),
      mode: z.enum(['a', 'b']).optional().describe('Which mode.'),
      target: z.string().url().describe('Where to send.'),
      retry: z
        .object({ attempts: z.number().int().min(1).default(3).describe('Attempts.') })
        .optional()
        .describe('Retry policy.'),
      steps: z
        .array(
          z.union([
            z.object({ click: z.string().describe('Click it.') }),
            z.object({ wait: z.number().describe('Wait.') }),
          ]),
        )
        .default([])
        .describe('Steps.'),
    })
    .strict();
  const rows = rowsOf(z.toJSONSchema(schema, { io: 'input' }) as Parameters<typeof rowsOf>[0], 'x.');
  expect(rows).toEqual([
    { key: 'x.limit', type: 'integer 1–64', default: '`4`', meaning: 'Most calls in flight.' },
    { key: 'x.mode', type: '`"a"` | `"b"`', default: '—', meaning: 'Which mode.' },
    { key: 'x.target', type: 'URL', default: 'required', meaning: 'Where to send.' },
    { key: 'x.retry', type: 'object', default: '—', meaning: 'Retry policy.' },
    { key: 'x.retry.attempts', type: 'integer ≥ 1', default: '`3`', meaning: 'Attempts.' },
    { key: 'x.steps', type: 'list of one of {click}, {wait}', default: '`[]`', meaning: 'Steps.' },
    { key: 'x.steps[].click', type: 'string', default: '—', meaning: 'Click it.' },
    { key: 'x.steps[].wait', type: 'number', default: '—', meaning: 'Wait.' },
  ]);
  expect(typeText({ anyOf: [{ type: 'number', minimum: 0, maximum: 2 }, { type: 'null' }] })).toBe(
    'number 0–2 or null',
  );
});

test('the page covers every key of the run config, the judge and each copilot type', () => {
  const page = renderConfigurationReference();
  for (const row of [
    '| `seed` | string | `"judgeflow"` |',
    '| `concurrency` | integer 1–64 | `4` |',
    '| `copilots[].answerPath` |',
    '| `copilots[].selectors.input` |',
    '| `cab.errorTaxonomy` | boolean | `false` |',
  ])
    expect(page).toContain(row);
});
