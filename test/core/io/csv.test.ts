import { csvRecords, neutraliseCell, restoreCell, toCsv } from '../../../core/io/csv';

/** What annotators and copilots write that a spreadsheet would run as a formula, and their look-alikes. */
const CELLS = [
  '=HYPERLINK("http://x","y")',
  '+1',
  '-5 points, but fine',
  '@SUM(A1)',
  '\tindented',
  "'=already quoted",
  "''=twice",
  "'plain quote",
  'plain',
  ' leading space ',
  '',
  'line\nbreak, "quoted"',
];

test('export → import of CSV cells is lossless: the formula guard is taken off again, whatever the text', () => {
  for (const cell of CELLS) expect(restoreCell(neutraliseCell(cell))).toBe(cell);
  const text = toCsv([CELLS]);
  const [read] = csvRecords(text, 'x.csv');
  expect(read.cells.map(restoreCell)).toEqual(CELLS);
  // …and a second round trip adds nothing either.
  expect(csvRecords(toCsv([read.cells.map(restoreCell)]), 'x.csv')[0].cells).toEqual(read.cells);
});

test('the guard still makes every formula inert in the file', () => {
  for (const cell of CELLS.filter((c) => /^'*[=+\-@\t]/.test(c)))
    expect(neutraliseCell(cell).startsWith("'")).toBe(true);
});
