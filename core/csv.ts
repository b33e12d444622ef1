/** RFC 4180 CSV: quoted fields, doubled quotes, CRLF or LF, embedded newlines. */

/** RFC 4180 records, each with the line it starts on (quoted fields may span lines). Blank lines are skipped. */
export function csvRecords(text: string): Array<{ line: number; cells: string[] }> {
  const out: Array<{ line: number; cells: string[] }> = [];
  let cells: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let start = 1;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0; // skip a UTF-8 BOM
  const endRecord = () => {
    cells.push(field);
    if (!(cells.length === 1 && cells[0] === '')) out.push({ line: start, cells });
    cells = [];
    field = '';
  };
  for (; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') line++;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      cells.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') {
        i++;
        line++;
      }
      endRecord();
      start = line;
    } else field += c;
  }
  if (field !== '' || cells.length > 0) endRecord();
  return out;
}

export function parseCsv(text: string): string[][] {
  return csvRecords(text).map((r) => r.cells);
}

/** Rows as objects keyed by the header row; throws naming any missing required column. */
export function parseCsvRecords(text: string, where: string, required: string[] = []): Array<Record<string, string>> {
  const [header, ...rows] = parseCsv(text);
  if (!header) throw new Error(`${where}: the CSV file is empty (expected a header row)`);
  const missing = required.filter((c) => !header.includes(c));
  if (missing.length) throw new Error(`${where}: missing column ${missing.map((m) => `"${m}"`).join(', ')} (header has: ${header.join(', ')})`);
  return rows.map((cells) => Object.fromEntries(header.map((name, k) => [name, cells[k] ?? ''])));
}

function quote(value: unknown): string {
  const s = value === null || value === undefined ? '' : String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(rows: unknown[][]): string {
  return rows.map((r) => r.map(quote).join(',')).join('\n') + '\n';
}
