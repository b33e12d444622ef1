/** The `panel` block in report.md and report.html, the same for every protocol. */
import { dataTable, esc } from './html/page';
import { fmt, mdText, table } from './markdown';
import type { Panel } from '../stats/panel';
import { MIN_SELF_PREFERENCE_QUERIES, SELF_PREFERENCE_ALPHA } from '../stats/selfPreference';

export function tables(p: Panel) {
  const copilots = Object.keys(p.leaderboards[p.judges[0].name] ?? {});
  return {
    leaderboards: {
      header: ['copilot', ...p.judges.map((j) => `${j.name} (${j.model})`)],
      rows: copilots.map((c) => [c, ...p.judges.map((j) => fmt(p.leaderboards[j.name][c].score, 2))]),
    },
    agreement: {
      header: ['score', 'units', "Krippendorff's α", 'ICC(2,1)'],
      rows: Object.entries(p.agreement).map(([k, a]) => [k, a.units, fmt(a.alpha, 3), fmt(a.icc, 3)]),
    },
    tau: {
      header: ['judge A', 'judge B', "Kendall's τ-b of copilot orderings"],
      rows: p.rankCorrelation.map((r) => [r.a, r.b, fmt(r.kendallTau, 3)]),
    },
    self: {
      header: [
        'judge',
        'copilot',
        'family',
        'self-preference (points)',
        '95% CI',
        'judge scale',
        'p (Holm)',
        'queries',
        'flagged',
      ],
      rows: p.selfPreference.map((s) => [
        s.judge,
        s.copilot,
        s.family,
        fmt(s.difference, 2),
        s.ci95 ? `${fmt(s.ci95.low, 2)} to ${fmt(s.ci95.high, 2)}` : '–',
        fmt(s.scale, 2),
        fmt(s.pHolm, 4),
        s.queries,
        s.flagged ? 'yes' : 'no',
      ]),
    },
    failures: {
      header: ['judge', 'units', 'no verdict (failed)', 'first reason'],
      rows: p.judges.map((j) => {
        const f = p.failures?.[j.name];
        return [`${j.name} (${j.model})`, f?.units ?? '–', f?.failed ?? '–', f?.firstError ?? ''];
      }),
    },
    disagreements: {
      header: ['query', 'copilot', 'range', ...p.judges.map((j) => j.name)],
      rows: p.disagreements.map((d) => [
        d.queryId,
        d.copilot,
        fmt(d.range, 2),
        ...p.judges.map((j) =>
          d.judges[j.name]
            ? `${fmt(d.judges[j.name].total, 1)}: ${Object.values(d.judges[j.name].rationales ?? {})[0] ?? ''}`
            : '–',
        ),
      ]),
    },
  };
}

/**
 * Which panel judges failed, on how many units, and whose verdicts the panel's scores then rest on: the Failures
 * summary of report.md and report.html says it, so a judge that failed every call is never hidden behind "no failures".
 * Null when every judge gave every verdict (or an old report has no counts).
 */
export function judgeFailuresSummary(p: Panel | null | undefined): string | null {
  if (!p?.failures) return null;
  const failing = p.judges.filter((j) => (p.failures![j.name]?.failed ?? 0) > 0);
  if (!failing.length) return null;
  const judged = p.judges.filter((j) => {
    const f = p.failures![j.name];
    return !f || f.failed < f.units;
  });
  const who = (j: Panel['judges'][number]) => `${j.name} (${j.model})`;
  const each = failing.map((j) => {
    const f = p.failures![j.name];
    return `${who(j)} gave no verdict on ${f.failed} of ${f.units} units${f.firstError ? ` (${f.firstError})` : ''}`;
  });
  const restOn = judged.length
    ? `the panel's verdicts rest on ${judged.map(who).join(', ')} (${judged.length} of ${p.judges.length} judges)`
    : 'no judge gave a verdict, so the panel has none';
  return `Judges that failed: ${each.join('; ')}. Where a judge failed, ${restOn}${p.unitsBelowMinJudges ? `; ${p.unitsBelowMinJudges} unit(s) had fewer than panel.minJudges = ${p.minJudges} verdicts and have no panel score` : ''}.`;
}

/** What the failures mean for the scores: units below the quorum have no panel score. Old reports (no counts): nothing. */
const failuresNote = (p: Panel) => {
  if (!p.failures) return null;
  const failed = Object.values(p.failures).reduce((n, f) => n + f.failed, 0);
  if (!failed) return `Every judge gave a verdict on every unit (panel.minJudges ${p.minJudges}).`;
  return `${failed} judge verdict(s) failed. ${judgeFailuresSummary(p)} ${p.unitsBelowMinJudges ?? 0} unit(s) had fewer than panel.minJudges = ${p.minJudges} verdicts and have no panel score (missing data, counted as failed judgments above); the other units' scores come from the judges that gave a verdict.`;
};

const selfNote = (p: Panel) =>
  p.selfPreference.length
    ? `Self-preference check: ${p.selfPreference.length} judge × copilot pair(s) share a model family. Self-preference is the judge's own-family term in a model of every judge's per-query totals ` +
      `(judge offset + judge scale × consensus answer quality + one own-family term per judge with a family; offsets only with two judges), in points of the copilot's score, tested with a query jackknife t test; ` +
      `flagged when the term is positive (a preference for its own family), its Holm-adjusted p across the pairs is below ${SELF_PREFERENCE_ALPHA} and the judge scored at least ${MIN_SELF_PREFERENCE_QUERIES} queries (${p.selfPreference.filter((s) => s.flagged).length} flagged). A judge lenient to every copilot, or one stretching the scale, is not self-preferring.`
    : 'No judge shares a model family with a copilot (set family: on judges and copilots to check self-preference).';

export function panelMarkdown(p: Panel | null | undefined): string[] {
  if (!p) return [];
  const t = tables(p);
  return [
    '## Judge panel\n',
    `Scores above are the ${p.aggregate} over ${p.judges.length} judges of each judge's mean over its samples.\n`,
    ...(p.failures
      ? [
          '### Failures per judge\n',
          `${failuresNote(p)}\n`,
          table(
            t.failures.header,
            t.failures.rows.map((r) => r.map((c) => (typeof c === 'string' ? mdText(c) : c))),
          ),
          '',
        ]
      : []),
    "### Each judge's leaderboard\n",
    table(t.leaderboards.header, t.leaderboards.rows),
    '\n### Agreement between judges\n',
    table(t.agreement.header, t.agreement.rows),
    '',
    table(t.tau.header, t.tau.rows),
    `\n### Self-preference\n\n${selfNote(p)}\n`,
    ...(p.selfPreference.length ? [table(t.self.header, t.self.rows)] : []),
    '\n### Where the judges disagree most\n',
    table(
      t.disagreements.header,
      t.disagreements.rows.map((r) => r.map((c) => (typeof c === 'string' ? mdText(c) : c))),
    ),
    `\nMethod: ${p.method}.\n`,
  ];
}

export function panelSections(report: Record<string, unknown>): Array<[string, string, string]> {
  const p = report.panel as Panel | undefined;
  if (!p) return [];
  const t = tables(p);
  return [
    [
      'panel',
      'Judge panel',
      `<p class="intro">${esc(`Scores are the ${p.aggregate} over ${p.judges.length} judges of each judge's mean over its samples.`)}</p>` +
        (p.failures
          ? `<p class="note" id="panel-failures-note">${esc(failuresNote(p)!)}</p>` +
            dataTable('Failures per judge', t.failures.header, t.failures.rows, 'id="panel-failures"')
          : '') +
        dataTable(
          "Each judge's leaderboard (mean total)",
          t.leaderboards.header,
          t.leaderboards.rows,
          'id="panel-leaderboards"',
        ) +
        dataTable('Agreement between judges', t.agreement.header, t.agreement.rows, 'id="panel-agreement"') +
        dataTable('Rank correlation of copilot orderings', t.tau.header, t.tau.rows) +
        `<p class="note" id="panel-self-preference-note">${esc(selfNote(p))}</p>` +
        (p.selfPreference.length
          ? dataTable('Self-preference: same model family', t.self.header, t.self.rows, 'id="panel-self-preference"')
          : '') +
        dataTable(
          'Where the judges disagree most (total and first rationale per judge)',
          t.disagreements.header,
          t.disagreements.rows,
        ) +
        `<p class="note">Method: ${esc(p.method)}.</p>`,
    ],
  ];
}
