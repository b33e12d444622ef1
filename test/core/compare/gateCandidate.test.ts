import { SaxesParser } from 'saxes';
import { compareRuns, type CompareRun } from '../../../core/compare/compare';
import { gateJunit } from '../../../core/compare/gate';
import { candidateProblems, gateCoverage } from '../../../core/compare/gateCandidate';
import type { Query, StoredJudgment } from '../../../core/model/types';
import { latticeProtocol } from '../../../rubrics/lattice';

const judge = { model: 'j', baseURL: 'http://127.0.0.1:1/v1', temperature: 0 };

function judgment(runId: string, queryId: string, copilot: string, ok: boolean): StoredJudgment {
  const scores = ok ? { D1: 5, D2: 6 } : null;
  return {
    runId,
    queryId,
    copilot,
    rubricVersion: 'v1',
    status: ok ? 'ok' : 'failed',
    scores: scores as never,
    rationales: null,
    total: ok ? 11 : null,
    rank: null,
    position: null,
    error: ok ? null : 'http: HTTP 500',
    judge: { ...judge, rubricVersion: 'v1' },
    attempts: 1,
    createdAt: '2025-01-01T00:00:00Z',
  } as StoredJudgment;
}
const queries = (n: number, task = 'T1'): Query[] =>
  Array.from({ length: n }, (_, i) => ({ id: `q${i}`, text: `question ${i}`, task, category: 'C1' }));
const side = (runId: string, qs: Query[], okFor: (i: number) => boolean): CompareRun => ({
  runId,
  protocol: 'lattice',
  snapshotId: 's',
  rubricVersion: 'v1',
  judge,
  copilots: ['Ace'],
  judgments: qs.map((q, i) => judgment(runId, q.id, 'Ace', okFor(i))),
});

test('a candidate whose every verdict failed has coverage 0 and fails; one covering 9 of 10 passes at the default 0.9, not at 0.95', () => {
  const qs = queries(10);
  const allFailed = compareRuns(
    side('A', qs, () => true),
    side('B', qs, () => false),
    qs,
    latticeProtocol,
  );
  expect(gateCoverage(allFailed)).toEqual([{ copilot: 'Ace', paired: 0, baselineJudged: 10, coverage: 0 }]);
  const problems = candidateProblems({ runId: 'B', status: 'completed', summary: {} }, allFailed);
  expect(problems).toEqual([
    expect.stringContaining(
      'Ace: the candidate has verdicts for 0 of the 10 queries the baseline judged (coverage 0%, below --min-coverage 0.9)',
    ),
  ]);

  const nineOfTen = compareRuns(
    side('A', qs, () => true),
    side('B', qs, (i) => i !== 3),
    qs,
    latticeProtocol,
  );
  expect(candidateProblems({ runId: 'B', status: 'completed', summary: {} }, nineOfTen)).toEqual([]);
  expect(candidateProblems({ runId: 'B', status: 'completed', summary: {} }, nineOfTen, 0.95)).toHaveLength(1);
});

test('a candidate that is not a completed run fails with its status and reason', () => {
  const qs = queries(4);
  const c = compareRuns(
    side('A', qs, () => true),
    side('B', qs, () => true),
    qs,
    latticeProtocol,
  );
  expect(
    candidateProblems(
      { runId: 'B', status: 'failed', summary: { error: 'cancelled (judgeflow cancel, or from the Temporal UI)' } },
      c,
    ),
  ).toEqual([
    'candidate B is not a completed run: it is failed (cancelled (judgeflow cancel, or from the Temporal UI))',
  ]);
});

test('JUnit XML with control characters in a label (a group name) is well formed (a strict XML parser reads it); the candidate problem is a failed case', () => {
  const qs = queries(6, 'de\u0001fi\u001b[31m\u0000');
  const a = side('A', qs, () => true);
  const b = side('B', qs, (i) => i > 0);
  const xml = gateJunit(compareRuns(a, b, qs, latticeProtocol), {}, [
    'candidate B is not a completed run: it is failed (bad\u0007 bell)',
  ]);
  expect(xml).toContain('task.de\\u0001fi\\u001b[31m\\u0000');
  const parser = new SaxesParser();
  const errors: string[] = [];
  const names: string[] = [];
  parser.on('error', (e) => errors.push(e.message));
  parser.on('opentag', (t) => {
    if (t.name === 'testcase') names.push(String(t.attributes.name));
  });
  parser.write(xml).close();
  expect(errors).toEqual([]);
  expect(names).toEqual(['candidate run', 'Ace']);
  expect(xml).toMatch(/<testsuites [^>]*tests="2" failures="1"/);
});
