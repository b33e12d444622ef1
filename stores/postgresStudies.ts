import crypto from 'node:crypto';
import type { StudyDump } from '../core/model/store';
import type { StudyItem } from '../core/study/design';
import type {
  Annotator,
  Answer,
  RecordedAnnotation,
  StoredAssignment,
  StudyRecord,
  StudyStore,
  Submission,
} from '../core/study/types';
import type { PostgresDb, Queryable } from './postgresDb';
import { studyDump, toAnnotator, toAssignment, toStudy, toSubmission } from './rows';

const ASSIGNMENT_COLUMNS = 'assignment_id, study, item_id, slot, left_copilot, right_copilot, annotator_id, ord';

/**
 * The study tables in the PostgreSQL results store; statement for statement the same as stores/sqliteStudies.ts.
 * Where SQLite serialises writers with its one write lock (BEGIN IMMEDIATE), this takes row locks: a submission holds its
 * study's row FOR SHARE while it is stored and closing takes it FOR UPDATE, so an answer is stored before the close (and
 * recorded by it) or refused; recording locks the assignment's row, so revisions of one assignment are counted in turn.
 */
export class PostgresStudyStore implements StudyStore {
  constructor(private readonly db: PostgresDb) {}

  async createStudy(
    study: StudyRecord,
    items: StudyItem[],
    assignments: Array<Omit<StoredAssignment, 'annotatorId' | 'order' | 'study'>>,
  ): Promise<void> {
    await this.db.transaction(async (c) => {
      await c.query('INSERT INTO studies VALUES ($1, $2, $3, $4, $5, $6, $7)', [
        study.name,
        study.runId,
        study.status,
        study.createdAt,
        study.closedAt,
        study.workflowId,
        JSON.stringify(study.spec),
      ]);
      for (const it of items)
        await c.query('INSERT INTO study_items VALUES ($1, $2, $3, $4, $5)', [
          study.name,
          it.itemId,
          it.queryId,
          it.first,
          it.second,
        ]);
      for (const a of assignments)
        await c.query(
          `INSERT INTO study_assignments (${ASSIGNMENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, NULL, NULL)`,
          [a.assignmentId, study.name, a.itemId, a.slot, a.left, a.right],
        );
    });
  }

  async getStudy(name: string): Promise<StudyRecord | null> {
    const [row] = await this.db.rows('SELECT * FROM studies WHERE name = $1', [name]);
    return row ? toStudy(row) : null;
  }

  async listStudies(): Promise<StudyRecord[]> {
    return (await this.db.rows('SELECT * FROM studies ORDER BY created_at DESC')).map(toStudy);
  }

  async studyItems(name: string): Promise<StudyItem[]> {
    return (await this.db.rows('SELECT * FROM study_items WHERE study = $1 ORDER BY item_id', [name])).map((r) => ({
      itemId: r.item_id,
      queryId: r.query_id,
      first: r.first,
      second: r.second,
    }));
  }

  async studyAssignments(name: string): Promise<StoredAssignment[]> {
    return (await this.db.rows('SELECT * FROM study_assignments WHERE study = $1 ORDER BY slot', [name])).map(
      toAssignment,
    );
  }

  async addAnnotators(
    name: string,
    annotators: Array<Annotator & { tokenHash: string }>,
    deal: Array<{ assignmentId: string; annotatorId: string; order: number }>,
  ): Promise<void> {
    const now = new Date().toISOString();
    await this.db.transaction(async (c) => {
      for (const a of annotators)
        await c.query(
          'INSERT INTO study_annotators (annotator_id, study, label, token_hash, source, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
          [a.annotatorId, name, a.label, a.tokenHash, a.source, now],
        );
      for (const d of deal)
        await c.query(
          'UPDATE study_assignments SET annotator_id = $1, ord = $2 WHERE assignment_id = $3 AND study = $4',
          [d.annotatorId, d.order, d.assignmentId, name],
        );
    });
  }

  async annotators(name: string): Promise<Annotator[]> {
    return (
      await this.db.rows('SELECT * FROM study_annotators WHERE study = $1 ORDER BY created_at, label', [name])
    ).map(toAnnotator);
  }

  async annotatorByTokenHash(tokenHash: string): Promise<Annotator | null> {
    const [row] = await this.db.rows('SELECT * FROM study_annotators WHERE token_hash = $1', [tokenHash]);
    return row ? toAnnotator(row) : null;
  }

  async annotatorQueue(annotatorId: string): Promise<Array<StoredAssignment & { answer: Answer | null }>> {
    const rows = await this.db.rows(
      `SELECT a.*, (SELECT s.answer FROM study_submissions s WHERE s.assignment_id = a.assignment_id AND s.status != 'rejected' ORDER BY s.seq DESC LIMIT 1) AS latest
       FROM study_assignments a WHERE a.annotator_id = $1 ORDER BY a.ord`,
      [annotatorId],
    );
    return rows.map((r) => ({ ...toAssignment(r), answer: r.latest ? (JSON.parse(r.latest) as Answer) : null }));
  }

  async getAssignment(assignmentId: string): Promise<StoredAssignment | null> {
    const [row] = await this.db.rows('SELECT * FROM study_assignments WHERE assignment_id = $1', [assignmentId]);
    return row ? toAssignment(row) : null;
  }

  async putSubmission(s: Omit<Submission, 'seq' | 'status' | 'note'>): Promise<Submission | null> {
    const stored = await this.db.transaction(async (c) => {
      const [study] = (await c.query('SELECT status FROM studies WHERE name = $1 FOR SHARE', [s.study])).rows;
      if (study?.status !== 'open') return false;
      await c.query(
        "INSERT INTO study_submissions (submission_id, study, assignment_id, annotator_id, answer, received_at, status) VALUES ($1, $2, $3, $4, $5, $6, 'pending') ON CONFLICT (submission_id) DO NOTHING",
        [s.submissionId, s.study, s.assignmentId, s.annotatorId, JSON.stringify(s.answer), s.receivedAt],
      );
      return true;
    });
    return stored ? this.getSubmission(s.submissionId) : null;
  }

  async getSubmission(submissionId: string): Promise<Submission | null> {
    const [row] = await this.db.rows('SELECT * FROM study_submissions WHERE submission_id = $1', [submissionId]);
    return row ? toSubmission(row) : null;
  }

  async pendingSubmissions(limit: number): Promise<Submission[]> {
    return (
      await this.db.rows("SELECT * FROM study_submissions WHERE status = 'pending' ORDER BY seq LIMIT $1", [limit])
    ).map(toSubmission);
  }

  private async recordInTransaction(
    c: Queryable,
    submissionId: string,
  ): Promise<{ recorded: boolean; revision: number } | null> {
    const [found] = (
      await c.query('SELECT assignment_id FROM study_submissions WHERE submission_id = $1', [submissionId])
    ).rows;
    if (!found) return null;
    // Recordings of one assignment take turns (the revision count and the newest-wins update read what the other wrote).
    await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`study_assignment:${found.assignment_id}`]);
    const [s] = (await c.query('SELECT * FROM study_submissions WHERE submission_id = $1', [submissionId])).rows;
    const count = async (upToSeq?: number) =>
      (
        await c.query(
          `SELECT COUNT(*)::int AS n FROM study_submissions WHERE assignment_id = $1 AND status = 'recorded'${upToSeq === undefined ? '' : ' AND seq <= $2'}`,
          [s.assignment_id, ...(upToSeq === undefined ? [] : [upToSeq])],
        )
      ).rows[0].n as number;
    const revision = await count(s.seq);
    if (s.status === 'recorded') return { recorded: true, revision }; // recorded before (an activity retried after its worker died): the same answer
    if (s.status === 'rejected') return { recorded: false, revision: 0 };
    await c.query("UPDATE study_submissions SET status = 'recorded' WHERE seq = $1", [s.seq]);
    const revisions = await count();
    // The last submission received counts, whatever order the recordings arrive in.
    await c.query(
      `INSERT INTO study_annotations (assignment_id, study, submission_seq, answer, revision, submitted_at, source) VALUES ($1, $2, $3, $4, $5, $6, 'app')
       ON CONFLICT (assignment_id) DO UPDATE SET submission_seq = excluded.submission_seq, answer = excluded.answer, submitted_at = excluded.submitted_at, revision = $5
       WHERE excluded.submission_seq > study_annotations.submission_seq`,
      [s.assignment_id, s.study, s.seq, s.answer, revisions, s.received_at],
    );
    await c.query('UPDATE study_annotations SET revision = $1 WHERE assignment_id = $2', [revisions, s.assignment_id]);
    return { recorded: true, revision: revision + 1 };
  }

  async recordSubmission(submissionId: string): Promise<{ recorded: boolean; revision: number } | null> {
    return this.db.transaction((c) => this.recordInTransaction(c, submissionId));
  }

  async rejectSubmission(submissionId: string, note: string): Promise<void> {
    await this.db.query(
      "UPDATE study_submissions SET status = 'rejected', note = $1 WHERE submission_id = $2 AND status = 'pending'",
      [note, submissionId],
    );
  }

  async closeStudy(name: string, closedAt: string): Promise<{ recorded: number }> {
    return this.db.transaction(async (c) => {
      await c.query('SELECT 1 FROM studies WHERE name = $1 FOR UPDATE', [name]); // waits for submissions being stored; blocks new ones
      const pending = (
        await c.query(
          "SELECT submission_id FROM study_submissions WHERE study = $1 AND status = 'pending' ORDER BY seq",
          [name],
        )
      ).rows;
      let recorded = 0;
      for (const p of pending) if ((await this.recordInTransaction(c, p.submission_id))?.recorded) recorded++;
      await c.query("UPDATE studies SET status = 'closed', closed_at = COALESCE(closed_at, $1) WHERE name = $2", [
        closedAt,
        name,
      ]);
      return { recorded };
    });
  }

  async annotations(name: string): Promise<RecordedAnnotation[]> {
    const rows = await this.db.rows(
      'SELECT a.*, n.answer, n.revision, n.submitted_at, n.source FROM study_annotations n JOIN study_assignments a ON a.assignment_id = n.assignment_id WHERE n.study = $1 ORDER BY a.slot',
      [name],
    );
    return rows.map((r) => ({
      ...toAssignment(r),
      annotatorId: r.annotator_id,
      answer: JSON.parse(r.answer),
      revision: r.revision,
      submittedAt: r.submitted_at,
      source: r.source,
    }));
  }

  async submissions(name: string): Promise<Submission[]> {
    return (await this.db.rows('SELECT * FROM study_submissions WHERE study = $1 ORDER BY seq', [name])).map(
      toSubmission,
    );
  }

  async importAnnotations(
    name: string,
    rows: Array<{
      annotator: string;
      itemId: string;
      left: string;
      right: string;
      answer: Answer;
      submittedAt: string;
    }>,
  ): Promise<number> {
    const now = new Date().toISOString();
    return this.db.transaction(async (c) => {
      for (const r of rows) {
        const annotatorId = `import:${name}:${r.annotator}`;
        await c.query(
          "INSERT INTO study_annotators (annotator_id, study, label, token_hash, source, created_at) VALUES ($1, $2, $3, NULL, 'import', $4) ON CONFLICT DO NOTHING",
          [annotatorId, name, r.annotator, now],
        );
        const assignmentId = `imp-${crypto.randomBytes(8).toString('hex')}`;
        await c.query(
          `INSERT INTO study_assignments (${ASSIGNMENT_COLUMNS}) VALUES ($1, $2, $3, -1, $4, $5, $6, NULL)`,
          [assignmentId, name, r.itemId, r.left, r.right, annotatorId],
        );
        const seq = (
          await c.query(
            "INSERT INTO study_submissions (submission_id, study, assignment_id, annotator_id, answer, received_at, status) VALUES ($1, $2, $3, $4, $5, $6, 'recorded') RETURNING seq",
            [
              `imp-${crypto.randomBytes(8).toString('hex')}`,
              name,
              assignmentId,
              annotatorId,
              JSON.stringify(r.answer),
              r.submittedAt,
            ],
          )
        ).rows[0].seq;
        await c.query(
          "INSERT INTO study_annotations (assignment_id, study, submission_seq, answer, revision, submitted_at, source) VALUES ($1, $2, $3, $4, 1, $5, 'import')",
          [assignmentId, name, seq, JSON.stringify(r.answer), r.submittedAt],
        );
      }
      return rows.length;
    });
  }

  async addStudyEvent(name: string, kind: string, detail: unknown): Promise<void> {
    await this.db.query('INSERT INTO study_events (study, at, kind, detail) VALUES ($1, $2, $3, $4)', [
      name,
      new Date().toISOString(),
      kind,
      JSON.stringify(detail),
    ]);
  }

  async studyEvents(name: string): Promise<Array<{ at: string; kind: string; detail: unknown }>> {
    return (await this.db.rows('SELECT * FROM study_events WHERE study = $1 ORDER BY seq', [name])).map((r) => ({
      at: r.at,
      kind: r.kind,
      detail: JSON.parse(r.detail),
    }));
  }

  // ---- copying (used by PostgresStore's export and import) ----------------------------
  async dump(name: string): Promise<StudyDump> {
    const inserted = (sql: string) => this.db.rows(sql, [name]);
    return studyDump(this, name, {
      assignments: await inserted('SELECT * FROM study_assignments WHERE study = $1 ORDER BY seq'),
      annotators: await inserted('SELECT * FROM study_annotators WHERE study = $1 ORDER BY seq'),
      annotations: await inserted(
        'SELECT n.*, s.submission_id FROM study_annotations n JOIN study_submissions s ON s.seq = n.submission_seq WHERE n.study = $1 ORDER BY n.seq',
      ),
    });
  }

  /** A whole study, inside the caller's transaction; a study already here is kept as it is (returns 0). */
  async insertDump(c: Queryable, d: StudyDump): Promise<number> {
    const s = d.study;
    const added = (
      await c.query('INSERT INTO studies VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING', [
        s.name,
        s.runId,
        s.status,
        s.createdAt,
        s.closedAt,
        s.workflowId,
        JSON.stringify(s.spec),
      ])
    ).rowCount;
    if (!added) return 0;
    for (const it of d.items)
      await c.query('INSERT INTO study_items VALUES ($1, $2, $3, $4, $5)', [
        s.name,
        it.itemId,
        it.queryId,
        it.first,
        it.second,
      ]);
    for (const a of d.assignments)
      await c.query(`INSERT INTO study_assignments (${ASSIGNMENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
        a.assignmentId,
        s.name,
        a.itemId,
        a.slot,
        a.left,
        a.right,
        a.annotatorId,
        a.order,
      ]);
    for (const a of d.annotators)
      await c.query(
        'INSERT INTO study_annotators (annotator_id, study, label, token_hash, source, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
        [a.annotatorId, s.name, a.label, a.tokenHash, a.source, a.createdAt],
      );
    const seqOf = new Map<string, number>();
    for (const x of d.submissions) {
      const { rows } = await c.query(
        'INSERT INTO study_submissions (submission_id, study, assignment_id, annotator_id, answer, received_at, status, note) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING seq',
        [
          x.submissionId,
          s.name,
          x.assignmentId,
          x.annotatorId,
          JSON.stringify(x.answer),
          x.receivedAt,
          x.status,
          x.note,
        ],
      );
      seqOf.set(x.submissionId, rows[0].seq);
    }
    for (const n of d.annotations)
      await c.query(
        'INSERT INTO study_annotations (assignment_id, study, submission_seq, answer, revision, submitted_at, source) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        [
          n.assignmentId,
          s.name,
          seqOf.get(n.submissionId),
          JSON.stringify(n.answer),
          n.revision,
          n.submittedAt,
          n.source,
        ],
      );
    for (const e of d.events)
      await c.query('INSERT INTO study_events (study, at, kind, detail) VALUES ($1, $2, $3, $4)', [
        s.name,
        e.at,
        e.kind,
        JSON.stringify(e.detail),
      ]);
    return 1;
  }
}
