import type ExcelJS from 'exceljs';

/** One worksheet: a bold, frozen header row and the rows below it (undefined cells left empty). */
export function sheet(wb: ExcelJS.Workbook, name: string, header: string[], rows: unknown[][]): void {
  const ws = wb.addWorksheet(name);
  ws.addRow(header).font = { bold: true };
  for (const row of rows) ws.addRow(row.map((v) => (v === undefined ? null : v)));
  ws.views = [{ state: 'frozen', ySplit: 1 }];
}
