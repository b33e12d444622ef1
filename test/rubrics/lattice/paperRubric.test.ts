import fs from 'node:fs';
import path from 'node:path';
import { latticeProtocol } from '../../../rubrics/lattice';
import { latticeMessages } from '../../../rubrics/lattice/judge';
import type { LatticeRubric } from '../../../rubrics/lattice/rubric';
import { REPO, SHARED } from '../../support/harness';

const rubric = latticeProtocol.loadRubric(latticeProtocol.defaultRubricDir) as LatticeRubric;
const LATTICE_SHARED = path.join(SHARED, 'datasets', 'lattice');
const HAS_SHARED = fs.existsSync(path.join(LATTICE_SHARED, 'filtered_queries_240.json'));
const NEEDS_SHARED = 'needs ../shared/datasets/lattice (CI has it; JUDGEFLOW_TEST_SHARED points elsewhere)';
const withShared = HAS_SHARED
  ? test
  : (name: string, fn: jest.ProvidesCallback) => test.skip(`${name} [skipped: ${NEEDS_SHARED}]`, fn);

const prompt = (task: string, category: string, response = 'ANSWER TEXT') =>
  latticeMessages(
    rubric,
    { id: 'q', text: 'What threshold triggers liquidation on Aave v3?', task, category },
    response,
  )
    .map((m) => m.content)
    .join('\n');

describe("the paper's rubric (Table 1, Table 2, the reference judge instructions)", () => {
  test("the 16 tasks carry Table 2's ids and names, in order", () => {
    expect(rubric.data.tasks.map((t) => `${t.id} ${t.name}`)).toEqual([
      'T1 Protocol Mechanism Interpretation',
      'T2 Event & Catalyst Impact Analysis',
      'T3 Claim Validation & Narrative Hygiene',
      'T4 Sentiment Structure & Attention Diagnostics',
      'T5 Market Regime & Behavior Assessment',
      'T6 Liquidity, Capacity & Execution Feasibility Analysis',
      'T7 Derivative Pricing & Positioning Interpretation',
      'T8 Capital Flow & Participation Analysis',
      'T9 Supply Dynamics & Ownership Risk Assessment',
      'T10 Risk Surface & Failure Mode Identification',
      'T11 Scenario-Based Stress & Failure Analysis',
      'T12 Participation & Opportunity Cost Evaluation',
      'T13 Capital Allocation & Trade Structuring Under Constraints',
      'T14 Execution Planning & Operational Safety Design',
      'T15 Adaptive Learning from Market Feedback',
      'T16 Scope Boundary Recognition & Safe Refusal',
    ]);
    expect(rubric.data.categories.map((c) => `${c.id} ${c.name}`)).toEqual([
      'C1 Basic',
      'C2 Comparative',
      'C3 Constrained',
      'C4 Decision',
      'C5 Ambiguous',
    ]);
  });

  withShared('task and category labels are exactly those of the published query files', () => {
    for (const set of ['80', '240', '1200']) {
      const rows = JSON.parse(
        fs.readFileSync(path.join(LATTICE_SHARED, `filtered_queries_${set}.json`), 'utf8'),
      ) as Array<{ task: string; category: string }>;
      const tasks = new Set(rubric.data.tasks.map((t) => `${t.id} ${t.name}`));
      const categories = new Set(rubric.data.categories.map((c) => `${c.id} ${c.name}`));
      expect(rows.filter((r) => !tasks.has(r.task))).toEqual([]);
      expect(rows.filter((r) => !categories.has(r.category))).toEqual([]);
      expect(new Set(rows.map((r) => r.task)).size).toBe(16);
    }
  });

  test("the weights are the protocol document's weight matrix", () => {
    expect(rubric.data.weights).toEqual({
      C1: { D1: 15, D2: 25, D3: 15, D4: 15, D5: 15, D6: 15 },
      C2: { D1: 15, D2: 20, D3: 20, D4: 15, D5: 15, D6: 15 },
      C3: { D1: 20, D2: 15, D3: 20, D4: 20, D5: 10, D6: 15 },
      C4: { D1: 15, D2: 10, D3: 30, D4: 20, D5: 10, D6: 15 },
      C5: { D1: 25, D2: 15, D3: 25, D4: 10, D5: 10, D6: 15 },
    });
  });

  test('the judge prompt carries the task name and description, every dimension with its four bands, and the rules', () => {
    const text = prompt('T1', 'C1');
    const t1 = rubric.data.tasks[0];
    expect(text).toContain(`T1 ${t1.name} - ${t1.description}`);
    for (const d of rubric.data.dimensions) {
      expect(text).toContain(`${d.id} ${d.name}: ${d.description}`);
      for (const [band, label] of [
        ['9-10', '9–10'],
        ['8', '8'],
        ['6-7', '6–7'],
        ['0-5', '≤5'],
      ])
        expect(text).toContain(`  ${label}: ${d.anchors![band as '8']}`);
    }
    // Bands best first, whatever order an object keeps its keys in.
    const d1 = text.slice(text.indexOf('D1 Intent Fidelity'));
    expect(d1.indexOf('9–10:')).toBeLessThan(d1.indexOf('  8:'));
    for (const r of rubric.data.rules!) expect(text).toContain(r.text);
    expect(text).toContain('market and price behaviour'); // D5's evidence angles
    expect(text).not.toMatch(/\bRefusal\b/);
  });

  test('the comparison-structure cap on D6 is shown for C2 queries only', () => {
    expect(prompt('T6', 'C2')).toMatch(/comparison table[^\n]*\(D6 ≤ 6\)/);
    for (const c of ['C1', 'C3', 'C4', 'C5']) expect(prompt('T6', c)).not.toContain('D6 ≤ 6');
    expect(prompt('T16', 'C2')).not.toContain('D6 ≤ 6');
  });

  test('T16: one dimension with its bands; the below-6 calibration rule, written for T1–T15, is not shown', () => {
    const text = prompt('T16', 'C1');
    expect(text).toContain(`Refusal ${rubric.data.refusal.name}: ${rubric.data.refusal.description}`);
    for (const band of ['9-10', '8', '6-7', '0-5'] as const) expect(text).toContain(rubric.data.refusal.anchors![band]);
    expect(text).not.toContain('D1 Intent Fidelity');
    expect(text).not.toContain(rubric.data.rules!.find((r) => r.id === 'calibration')!.text);
    expect(text).toContain(rubric.data.rules!.find((r) => r.id === 'text-only')!.text);
    expect(text).toContain('Grade the response on: Refusal.');
  });

  test('the prompt never names a copilot: only the query and the answer text vary', () => {
    const a = prompt('T3', 'C4', 'answer one');
    const b = prompt('T3', 'C4', 'answer two');
    expect(a.replace('answer one', '')).toBe(b.replace('answer two', ''));
  });

  withShared(
    'no sentence of the reference texts is in the rubric or its prompts (judgeflow words every criterion itself)',
    () => {
      const words = (s: string) =>
        s
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, ' ')
          .trim()
          .split(' ')
          .filter(Boolean);
      const ours = words(
        ['rubric.yaml', 'judge-system.md', 'judge-user.md', 'generation/system.md', 'generation/user.md']
          .map((f) => fs.readFileSync(path.join(REPO, 'rubrics', 'lattice', f), 'utf8'))
          .join('\n'),
      ).join(' ');
      const reference = [
        'judge_instructions_en.txt',
        'DeFi Agent Evaluation Tasks and Protocol.md',
        'prompt_80_to_240_en.txt',
      ]
        .map((f) => fs.readFileSync(path.join(LATTICE_SHARED, 'reference', f), 'utf8'))
        .join('\n');
      const copied: string[] = [];
      // Any run of 9 words the reference has, outside the task names (identifiers, kept exactly) and the weight table.
      const names = new Set(rubric.data.tasks.map((t) => words(t.name).join(' ')));
      const ref = words(reference);
      for (let i = 0; i + 9 <= ref.length; i++) {
        const run = ref.slice(i, i + 9).join(' ');
        if ([...names].some((n) => run.includes(n) || n.includes(run))) continue;
        if (ours.includes(run)) copied.push(run);
      }
      expect(copied).toEqual([]);
    },
  );
});
