/** The `grounding` block in report.md, report.html and the workbook, the same for every protocol. */
import type ExcelJS from 'exceljs';
import { dataTable, esc } from '../report/html/page';
import { mdText, table } from '../report/markdown';
import { sheet } from '../report/xlsx';
import type { GroundingReport } from './report';

const pct = (x: number | null | undefined) => (x === null || x === undefined ? '–' : `${(100 * x).toFixed(1)}%`);
const interval = (ci: { low: number; high: number } | null) => (ci ? `${pct(ci.low)} – ${pct(ci.high)}` : '–');

export const COPILOT_HEADER = [
  'copilot',
  'answers',
  'with context',
  'claims',
  'exact',
  'derivable',
  'fabricated',
  'contradicted',
  'verification rate (judgeflow: exact or derivable)',
  '95% CI (queries)',
  'verification rate (reference: same topic counts)',
  'stated verification rate (judge, mean)',
  'factual (judgeflow)',
  'partial (judgeflow)',
  'hallucinated (judgeflow)',
  'factual (judge)',
  'partially factual (judge)',
  'hallucinated (judge)',
  'citation precision',
  'citation completeness (reference: cited ÷ needing)',
  'correct-citation completeness (judgeflow: correctly cited ÷ needing)',
  'citation label correct',
  'citation label partially correct',
  'citation label incorrect',
  'missing citations',
  'context cut for judge',
  'failed checks',
];

export function copilotRows(g: GroundingReport): Array<Array<string | number | null>> {
  return Object.entries(g.copilots).map(([name, c]) => [
    name,
    c.responses,
    c.responsesWithContext,
    c.claims,
    c.verified,
    c.derivable,
    c.fabricated,
    c.contradicted,
    pct(c.verificationRate),
    interval(c.ci95),
    pct(c.referenceVerificationRate),
    pct(c.statedVerificationRate),
    c.labels.factual,
    c.labels.partial,
    c.labels.hallucinated,
    c.judgeLabels?.factual ?? null,
    c.judgeLabels?.partiallyFactual ?? null,
    c.judgeLabels?.hallucinated ?? null,
    pct(c.citationPrecision),
    pct(c.citationCompleteness),
    pct(c.correctCitationCompleteness),
    c.citationLabels?.correct ?? null,
    c.citationLabels?.partiallyCorrect ?? null,
    c.citationLabels?.incorrect ?? null,
    c.missingCitations,
    c.contextCutForJudge ?? 0,
    c.checksFailed,
  ]);
}

export const CONFLICT_HEADER = ['query', 'entity', 'metric', 'unit', 'values (copilot: value, status)'];
export function conflictRows(g: GroundingReport): Array<Array<string | number | null>> {
  return g.crossCopilotConflicts.map((c) => [
    c.queryId,
    c.entity,
    c.metric,
    c.unit,
    c.claims.map((x) => `${x.copilot}: ${x.value.toLocaleString('en-US')} (${x.status})`).join('; '),
  ]);
}

/** One table per query label: its values × copilots, each cell the verification rate and the claims behind it. */
export function categoryTables(
  g: GroundingReport,
): Array<{ label: string; header: string[]; rows: Array<Array<string | number | null>> }> {
  const copilots = Object.keys(g.copilots);
  return Object.entries(g.byCategory).map(([label, values]) => ({
    label,
    header: [label, ...copilots],
    rows: Object.keys(values)
      .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }))
      .map((v) => [
        v,
        ...copilots.map((c) =>
          values[v][c] ? `${pct(values[v][c].verificationRate)} (${values[v][c].claims})` : null,
        ),
      ]),
  }));
}

export const ANSWER_HEADER = [
  'query',
  'copilot',
  'judge',
  'label (judgeflow)',
  'label (judge)',
  'verification rate (judgeflow)',
  'stated verification rate (judge)',
  'citation label (judge)',
  'citation completeness (reference)',
  'context shown to judge',
];
export function answerRows(g: GroundingReport): Array<Array<string | number | null>> {
  return (g.answers ?? []).map((a) => [
    a.queryId,
    a.copilot,
    a.judge || null,
    a.label,
    a.judgeLabel,
    pct(a.verificationRate),
    pct(a.statedVerificationRate),
    a.citationLabel,
    pct(a.citationCompleteness),
    a.contextShown ? `${a.contextShown.chars} of ${a.contextShown.of} characters` : 'all',
  ]);
}

export const CLAIM_HEADER = [
  'query',
  'copilot',
  'judge',
  'claim',
  'status',
  'supporting excerpt',
  'cited source',
  'citation',
];
export function claimRows(g: GroundingReport): Array<Array<string | number | null>> {
  return g.claims.map((c) => [
    c.queryId,
    c.copilot,
    c.judge || null,
    c.text,
    c.status,
    c.excerpt,
    c.citedSource,
    c.citation,
  ]);
}

const intro = (g: GroundingReport) =>
  `Every claim of every answer checked against the context that copilot had (its tool outputs and retrieved text), by the grounding rubric ${g.groundingVersion} ` +
  `(checks: ${g.checks.join(', ')}). judgeflow's verification rate is the share of claims the context states exactly or from which they follow (rounding, conversion, arithmetic); the reference's also counts a claim whose topic the context discusses ("same topic"), and beside both stands the rate and label the judge stated itself, as the reference records them. ` +
  "Citation completeness is the reference's (claims with a citation ÷ claims needing one); judgeflow's stricter correct-citation completeness counts only correct citations. " +
  'Answers without context are "no context": their claims are listed for the comparison across copilots, never counted as grounded or hallucinated.';

export function groundingMarkdown(g: GroundingReport | undefined): string[] {
  if (!g) return [];
  const truncated = Object.entries(g.copilots).filter(([, c]) => c.contextTruncated > 0);
  return [
    '\n## Grounding (hallucination and citation checks)\n',
    `${intro(g)}\n`,
    table(COPILOT_HEADER, copilotRows(g)),
    ...categoryTables(g).flatMap((t) => [
      `\nVerification rate by ${mdText(t.label)} (claims checked):\n`,
      table(t.header, t.rows),
    ]),
    ...truncated.map(
      ([name, c]) =>
        `\nWarning: ${c.contextTruncated} answers of ${mdText(name)} had their context cut to grounding.maxContextChars when stored; claims supported only by the cut part count as unsupported.`,
    ),
    ...Object.entries(g.copilots)
      .filter(([, c]) => (c.contextCutForJudge ?? 0) > 0)
      .map(
        ([name, c]) =>
          `\nThe judge saw only part of the context of ${c.contextCutForJudge} answers of ${mdText(name)} (grounding.judgeContextChars; 'whole' shows all of it, as the reference does): ${(
            g.answers ?? []
          )
            .filter((a) => a.copilot === name && a.contextShown)
            .map((a) => `${mdText(a.queryId)} (${a.contextShown!.chars} of ${a.contextShown!.of})`)
            .join(', ')}.`,
      ),
    ...(g.crossCopilotConflicts.length
      ? [
          '\n### Numeric claims on which copilots disagree\n',
          'On one query, the same entity and metric stated with values more than 2% apart: at least one copilot is wrong.\n',
          table(CONFLICT_HEADER, conflictRows(g)),
        ]
      : ["\nNo numeric claim of one copilot disagrees with another copilot's on the same query."]),
    '',
  ];
}

/** report.html section (id, title, html) with the per-claim drill-down (each copilot's claims in a collapsible table). */
export function groundingSections(report: Record<string, unknown>): Array<[string, string, string]> {
  const g = report.grounding as GroundingReport | undefined;
  if (!g) return [];
  const conflicts = g.crossCopilotConflicts.length
    ? dataTable(
        'Numeric claims on which copilots disagree (same query, entity and metric)',
        CONFLICT_HEADER,
        conflictRows(g),
        'id="grounding-conflicts"',
      )
    : "<p>No numeric claim of one copilot disagrees with another copilot's on the same query.</p>";
  const drill = Object.keys(g.copilots)
    .map((name) => {
      const rows = claimRows({ ...g, claims: g.claims.filter((c) => c.copilot === name) }).map((r) =>
        r.slice(0, 1).concat(r.slice(3)),
      );
      return `<details class="grounding-claims"><summary>${esc(name)}: ${rows.length} claims</summary>${dataTable(`Claims of ${name}`, ['query', 'claim', 'status', 'supporting excerpt', 'cited source', 'citation'], rows)}</details>`;
    })
    .join('');
  const html = `<p class="intro">${esc(intro(g))}</p>${dataTable('Grounding per copilot', COPILOT_HEADER, copilotRows(g), 'id="grounding-table"')}${categoryTables(
    g,
  )
    .map((t) => dataTable(`Verification rate by ${t.label} (claims checked)`, t.header, t.rows))
    .join(
      '',
    )}${dataTable("Grounding per answer: judgeflow's label beside the judge's, and any cut of the context", ANSWER_HEADER, answerRows(g), 'id="grounding-answers"')}<h3>Disagreements between copilots</h3>${conflicts}<h3>Every claim</h3>${drill}`;
  return [['grounding', 'Grounding', html]];
}

export function groundingSheets(wb: ExcelJS.Workbook, report: Record<string, unknown>): void {
  const g = report.grounding as GroundingReport | undefined;
  if (!g) return;
  sheet(wb, 'Grounding', COPILOT_HEADER, copilotRows(g));
  sheet(wb, 'Grounding Answers', ANSWER_HEADER, answerRows(g));
  sheet(wb, 'Grounding Claims', CLAIM_HEADER, claimRows(g));
  sheet(wb, 'Grounding Conflicts', CONFLICT_HEADER, conflictRows(g));
  const categories = categoryTables(g);
  if (categories.length)
    sheet(
      wb,
      'Grounding by Category',
      ['label', 'value', ...Object.keys(g.copilots)],
      categories.flatMap((t) => t.rows.map((r) => [t.label, ...r])),
    );
}
