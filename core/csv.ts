/** RFC 4180 CSV: quoted fields, doubled quotes, CRLF or LF, embedded newlines. */

export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0; // skip a UTF-8 BOM
  for (; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows.filter((r) => !(r.length === 1 && r[0] === ''));
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
