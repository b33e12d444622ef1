/**
 * A schedule's page body: each copilot's line over its runs (intervals as bands, regressions against the previous run
 * marked), and the runs as a table with links to each run and to its compare with the run before.
 */
import type { Trend } from '../../compare/trend';
import { lineChart } from './charts';
import { esc, num, section } from './page';

export function trendSections(
  t: Trend,
  links: { run: (runId: string) => string; compare: (a: string, b: string) => string },
): string {
  if (!t.runs.length)
    return section(
      'trend',
      'Runs',
      '<p>No runs yet: the schedule has not benchmarked anything (does it have --then-run?).</p>',
    );
  const copilots = [...new Set(t.runs.flatMap((r) => Object.keys(r.copilots)))];
  const values = t.runs.flatMap((r) =>
    Object.values(r.copilots).flatMap((c) =>
      [c.score, c.ci95?.low, c.ci95?.high].filter((x): x is number => typeof x === 'number'),
    ),
  );
  const lo = values.length ? Math.floor(Math.min(...values)) : 0;
  const hi = values.length ? Math.ceil(Math.max(...values)) : 1;
  const chart = lineChart({
    id: 'trend-chart',
    title: "Each copilot's mean score per run (bands: 95% intervals; ▼ a significant drop against the run before)",
    labels: t.runs.map((r) => r.startedAt.slice(5, 16).replace('T', ' ')),
    series: copilots,
    points: copilots.map((c) =>
      t.runs.map((r) => ({
        value: r.copilots[c]?.score ?? null,
        low: r.copilots[c]?.ci95?.low ?? null,
        high: r.copilots[c]?.ci95?.high ?? null,
        flagged: r.vsPrevious?.regressions.includes(c) ?? false,
      })),
    ),
    domain: [lo, hi === lo ? lo + 1 : hi],
    digits: 2,
    valueName: 'score',
    flagName: 'regression',
  });
  const head = ['run', 'started', 'status', 'snapshot', ...copilots, 'vs previous'];
  const rows = t.runs.map((r) => {
    const cells = copilots.map((c) => {
      const s = r.copilots[c];
      const v = r.vsPrevious?.copilots[c];
      const mark = r.vsPrevious?.regressions.includes(c)
        ? ' <strong class="status-failed">▼ regression</strong>'
        : r.vsPrevious?.improvements.includes(c)
          ? ' ▲ improved'
          : '';
      return `${num(s?.score ?? null, 2)}${v?.delta != null ? ` <span class="muted">(Δ ${v.delta >= 0 ? '+' : ''}${v.delta.toFixed(2)}, p ${num(v.p, 3)})</span>` : ''}${mark}`;
    });
    const vs = r.vsPrevious
      ? `<a href="${esc(links.compare(r.vsPrevious.runId, r.runId))}">compare with ${esc(r.vsPrevious.runId)}</a>${r.vsPrevious.overlap.by === 'id' ? '' : ` <span class="muted">(${r.vsPrevious.overlap.paired} shared queries)</span>`}`
      : '–';
    return `<tr><th scope="row"><a href="${esc(links.run(r.runId))}">${esc(r.runId)}</a></th><td>${esc(r.startedAt)}</td><td>${esc(r.status)}</td><td>${esc(r.snapshotId)}</td>${cells.map((c) => `<td>${c}</td>`).join('')}<td>${vs}</td></tr>`;
  });
  const table = `<div class="table-wrap"><table><caption>Runs, oldest first</caption><thead><tr>${head.map((h) => `<th scope="col">${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
  return section('trend', 'Scores over time', chart) + section('runs', 'Runs', table);
}
