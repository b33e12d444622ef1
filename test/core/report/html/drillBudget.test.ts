import {
  DRILL_MIN_ANSWER_CHARS,
  DRILL_PAGE_ANSWER_CHARS,
  drillAnswerChars,
} from '../../../../core/report/html/runReport';

test("report.html's answers: whole while they fit the page's budget; past it the longest are cut to one length that fits (issue 35)", () => {
  // The paper's 1,200 × 4 with answers of a few thousand characters: all whole, up to what the judge saw.
  expect(drillAnswerChars(200_000, Array(4800).fill(3000))).toBe(200_000);
  expect(drillAnswerChars(2_000, Array(10).fill(3000))).toBe(2_000);
  // 7,200 answers of 1,000 characters and 100 of 1 MB: the short ones stay whole, the long ones are cut to what fits.
  const lengths = [...Array(7_200).fill(1_000), ...Array(100).fill(1_000_000)];
  const cap = drillAnswerChars(200_000, lengths);
  expect(cap).toBe(88_000);
  const shown = lengths.reduce((sum, n) => sum + Math.min(n, cap), 0);
  expect(shown).toBeLessThanOrEqual(DRILL_PAGE_ANSWER_CHARS);
  expect(shown).toBeGreaterThan(DRILL_PAGE_ANSWER_CHARS - 100);
  // 10× the paper's run with long answers: none is cut below the floor (the page then grows with the run).
  expect(drillAnswerChars(200_000, Array(72_000).fill(5_000))).toBe(DRILL_MIN_ANSWER_CHARS);
});
