#!/usr/bin/env node
// Makes an N× copy of a stored SQLite run for measuring the report's growth (docs/bench.md, issue 35):
//   node scripts/scale-store.js STORE_FILE OUT_FILE N
// Every query, answer, judge unit, judgment and LLM call of the store is copied N times, the copy k ≥ 1 under query id
// `<id>~k`, so a 3× report needs no 15-minute run. The snapshot's query count follows; nothing else changes.
const fs = require('node:fs');
const Database = require('better-sqlite3');
const [file, out, timesArg] = process.argv.slice(2);
const times = Number(timesArg);
if (!file || !out || !(times >= 1)) {
  console.error('usage: node scripts/scale-store.js STORE_FILE OUT_FILE N');
  process.exit(2);
}
if (fs.existsSync(out)) fs.rmSync(out);
new Database(file, { readonly: true }).exec(`VACUUM INTO '${out.replace(/'/g, "''")}'`);
const db = new Database(out);
db.transaction(() => {
  const queries = db.prepare('SELECT COUNT(*) FROM snapshot_queries WHERE snapshot_id = ?').pluck();
  for (const { snapshot_id: snapshot } of db.prepare('SELECT snapshot_id FROM snapshots').all()) {
    const n = queries.get(snapshot);
    for (let k = 1; k < times; k++)
      db.prepare(
        `INSERT INTO snapshot_queries SELECT snapshot_id, idx + ?, query_id || '~' || ?, json_set(query, '$.id', query_id || '~' || ?) FROM snapshot_queries WHERE snapshot_id = ? AND idx < ?`,
      ).run(k * n, k, k, snapshot, n);
    db.prepare('UPDATE snapshots SET query_count = ? WHERE snapshot_id = ?').run(n * times, snapshot);
  }
  const units = db.prepare('SELECT COUNT(*) FROM judge_units WHERE run_id = ?').pluck();
  for (const { run_id: run } of db.prepare('SELECT run_id FROM runs').all()) {
    const n = units.get(run);
    for (let k = 1; k < times; k++)
      db.prepare(
        `INSERT INTO judge_units SELECT run_id, idx + ?, json_set(unit, '$.queryId', json_extract(unit, '$.queryId') || '~' || ?) FROM judge_units WHERE run_id = ? AND idx < ?`,
      ).run(k * n, k, run, n);
  }
  for (const table of ['responses', 'judgments', 'llm_calls']) {
    const columns = db
      .prepare(`SELECT name FROM pragma_table_info(?)`)
      .pluck()
      .all(table)
      .map((c) => (c === 'query_id' ? `query_id || '~' || @k` : c));
    const copy = db.prepare(
      `INSERT INTO ${table} SELECT ${columns.join(', ')} FROM ${table} WHERE query_id IS NOT NULL AND query_id NOT LIKE '%~%'`,
    );
    for (let k = 1; k < times; k++) copy.run({ k });
  }
})();
db.close();
console.log(`${out}: ${times}× ${file}`);
