import crypto from 'node:crypto';
import type Database from 'better-sqlite3';
import type { StudyItem } from '../core/study/design';
import type { StudyDump } from '../core/model/store';
import type {
  Annotator,
  Answer,
  RecordedAnnotation,
  StoredAssignment,
  StudyRecord,
  StudyStore,
  Submission,
} from '../core/study/types';
import { studyDump, toAnnotator, toAssignment, toStudy, toSubmission } from './rows';

/** The study tables in the SQLite results store. */
export class SqliteStudyStore implements StudyStore {
  constructor(private readonly db: Database.Database) {}

  async createStudy(
    study: StudyRecord,
    items: StudyItem[],
    assignments: Array<Omit<StoredAssignment, 'annotatorId' | 'order' | 'study'>>,
  ): Promise<void> {
    const item = this.db.prepare('INSERT INTO study_items VALUES (?, ?, ?, ?, ?)');
    const assignment = this.db.prepare('INSERT INTO study_assignments VALUES (?, ?, ?, ?, ?, ?, NULL, NULL)');
    this.db.transaction(() => {
      this.db
        .prepare('INSERT INTO studies VALUES (?, ?, ?, ?, ?, ?, ?)')
        .run(
          study.name,
          study.runId,
          study.status,
          study.createdAt,
          study.closedAt,
          study.workflowId,
          JSON.stringify(study.spec),
        );
      for (const it of items) item.run(study.name, it.itemId, it.queryId, it.first, it.second);
      for (const a of assignments) assignment.run(a.assignmentId, study.name, a.itemId, a.slot, a.left, a.right);
    })();
  }

  async getStudy(name: string): Promise<StudyRecord | null> {
    const row = this.db.prepare('SELECT * FROM studies WHERE name = ?').get(name);
    return row ? toStudy(row) : null;
  }

  async listStudies(): Promise<StudyRecord[]> {
    return this.db.prepare('SELECT * FROM studies ORDER BY created_at DESC').all().map(toStudy);
  }

  async studyItems(name: string): Promise<StudyItem[]> {
    return (this.db.prepare('SELECT * FROM study_items WHERE study = ? ORDER BY item_id').all(name) as any[]).map(
      (r) => ({ itemId: r.item_id, queryId: r.query_id, first: r.first, second: r.second }),
    );
  }

  async studyAssignments(name: string): Promise<StoredAssignment[]> {
    return this.db.prepare('SELECT * FROM study_assignments WHERE study = ? ORDER BY slot').all(name).map(toAssignment);
  }

  async addAnnotators(
    name: string,
    annotators: Array<Annotator & { tokenHash: string }>,
    deal: Array<{ assignmentId: string; annotatorId: string; order: number }>,
  ): Promise<void> {
    const insert = this.db.prepare('INSERT INTO study_annotators VALUES (?, ?, ?, ?, ?, ?)');
    const assign = this.db.prepare(
      'UPDATE study_assignments SET annotator_id = ?, ord = ? WHERE assignment_id = ? AND study = ?',
    );
    const now = new Date().toISOString();
    this.db.transaction(() => {
      for (const a of annotators) insert.run(a.annotatorId, name, a.label, a.tokenHash, a.source, now);
      for (const d of deal) assign.run(d.annotatorId, d.order, d.assignmentId, name);
    })();
  }

  async annotators(name: string): Promise<Annotator[]> {
    return this.db
      .prepare('SELECT * FROM study_annotators WHERE study = ? ORDER BY created_at, label')
      .all(name)
      .map(toAnnotator);
  }

  async annotatorByTokenHash(tokenHash: string): Promise<Annotator | null> {
    const row = this.db.prepare('SELECT * FROM study_annotators WHERE token_hash = ?').get(tokenHash);
    return row ? toAnnotator(row) : null;
  }

  async annotatorQueue(annotatorId: string): Promise<Array<StoredAssignment & { answer: Answer | null }>> {
    const rows = this.db
      .prepare(
        `SELECT a.*, (SELECT s.answer FROM study_submissions s WHERE s.assignment_id = a.assignment_id AND s.status != 'rejected' ORDER BY s.seq DESC LIMIT 1) AS latest
         FROM study_assignments a WHERE a.annotator_id = ? ORDER BY a.ord`,
      )
      .all(annotatorId) as any[];
    return rows.map((r) => ({ ...toAssignment(r), answer: r.latest ? (JSON.parse(r.latest) as Answer) : null }));
  }

  async getAssignment(assignmentId: string): Promise<StoredAssignment | null> {
    const row = this.db.prepare('SELECT * FROM study_assignments WHERE assignment_id = ?').get(assignmentId);
    return row ? toAssignment(row) : null;
  }

  async putSubmission(s: Omit<Submission, 'seq' | 'status' | 'note'>): Promise<Submission | null> {
    // Checked in the same transaction as the close, so an answer is either stored before the close (and recorded by it) or refused.
    const stored = this.db
      .transaction(() => {
        const study = this.db.prepare('SELECT status FROM studies WHERE name = ?').get(s.study) as
          { status: string } | undefined;
        if (study?.status !== 'open') return false;
        this.db
          .prepare(
            "INSERT OR IGNORE INTO study_submissions (submission_id, study, assignment_id, annotator_id, answer, received_at, status) VALUES (?, ?, ?, ?, ?, ?, 'pending')",
          )
          .run(s.submissionId, s.study, s.assignmentId, s.annotatorId, JSON.stringify(s.answer), s.receivedAt);
        return true;
      })
      .immediate();
    return stored ? this.getSubmission(s.submissionId) : null;
  }

  async getSubmission(submissionId: string): Promise<Submission | null> {
    const row = this.db.prepare('SELECT * FROM study_submissions WHERE submission_id = ?').get(submissionId);
    return row ? toSubmission(row) : null;
  }

  async pendingSubmissions(limit: number): Promise<Submission[]> {
    return this.db
      .prepare("SELECT * FROM study_submissions WHERE status = 'pending' ORDER BY seq LIMIT ?")
      .all(limit)
      .map(toSubmission);
  }

  private recordInTransaction(submissionId: string): { recorded: boolean; revision: number } | null {
    const s = this.db.prepare('SELECT * FROM study_submissions WHERE submission_id = ?').get(submissionId) as any;
    if (!s) return null;
    const revision = (
      this.db
        .prepare(
          "SELECT COUNT(*) AS n FROM study_submissions WHERE assignment_id = ? AND status = 'recorded' AND seq <= ?",
        )
        .get(s.assignment_id, s.seq) as any
    ).n as number;
    if (s.status === 'recorded') return { recorded: true, revision }; // recorded before (an activity retried after its worker died): the same answer
    if (s.status === 'rejected') return { recorded: false, revision: 0 };
    this.db.prepare("UPDATE study_submissions SET status = 'recorded' WHERE seq = ?").run(s.seq);
    const revisions = (
      this.db
        .prepare("SELECT COUNT(*) AS n FROM study_submissions WHERE assignment_id = ? AND status = 'recorded'")
        .get(s.assignment_id) as any
    ).n as number;
    // The last submission received counts, whatever order the recordings arrive in.
    this.db
      .prepare(
        `INSERT INTO study_annotations VALUES (?, ?, ?, ?, ?, ?, 'app')
         ON CONFLICT (assignment_id) DO UPDATE SET submission_seq = excluded.submission_seq, answer = excluded.answer, submitted_at = excluded.submitted_at, revision = ?
         WHERE excluded.submission_seq > study_annotations.submission_seq`,
      )
      .run(s.assignment_id, s.study, s.seq, s.answer, revisions, s.received_at, revisions);
    this.db
      .prepare('UPDATE study_annotations SET revision = ? WHERE assignment_id = ?')
      .run(revisions, s.assignment_id);
    return { recorded: true, revision: revision + 1 };
  }

  async recordSubmission(submissionId: string): Promise<{ recorded: boolean; revision: number } | null> {
    return this.db.transaction(() => this.recordInTransaction(submissionId))();
  }

  async rejectSubmission(submissionId: string, note: string): Promise<void> {
    this.db
      .prepare(
        "UPDATE study_submissions SET status = 'rejected', note = ? WHERE submission_id = ? AND status = 'pending'",
      )
      .run(note, submissionId);
  }

  async closeStudy(name: string, closedAt: string): Promise<{ recorded: number }> {
    const close = this.db.transaction(() => {
      const pending = this.db
        .prepare("SELECT submission_id FROM study_submissions WHERE study = ? AND status = 'pending' ORDER BY seq")
        .all(name) as any[];
      let recorded = 0;
      for (const p of pending) if (this.recordInTransaction(p.submission_id)?.recorded) recorded++;
      this.db
        .prepare("UPDATE studies SET status = 'closed', closed_at = COALESCE(closed_at, ?) WHERE name = ?")
        .run(closedAt, name);
      return { recorded };
    });
    return close.immediate();
  }

  async annotations(name: string): Promise<RecordedAnnotation[]> {
    const rows = this.db
      .prepare(
        'SELECT a.*, n.answer, n.revision, n.submitted_at, n.source FROM study_annotations n JOIN study_assignments a ON a.assignment_id = n.assignment_id WHERE n.study = ? ORDER BY a.slot',
      )
      .all(name) as any[];
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
    return this.db.prepare('SELECT * FROM study_submissions WHERE study = ? ORDER BY seq').all(name).map(toSubmission);
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
    const annotator = this.db.prepare("INSERT OR IGNORE INTO study_annotators VALUES (?, ?, ?, NULL, 'import', ?)");
    const assignment = this.db.prepare('INSERT INTO study_assignments VALUES (?, ?, ?, -1, ?, ?, ?, NULL)');
    const submission = this.db.prepare(
      "INSERT INTO study_submissions (submission_id, study, assignment_id, annotator_id, answer, received_at, status) VALUES (?, ?, ?, ?, ?, ?, 'recorded')",
    );
    const annotation = this.db.prepare("INSERT INTO study_annotations VALUES (?, ?, ?, ?, 1, ?, 'import')");
    return this.db.transaction(() => {
      for (const r of rows) {
        const annotatorId = `import:${name}:${r.annotator}`;
        annotator.run(annotatorId, name, r.annotator, now);
        const assignmentId = `imp-${crypto.randomBytes(8).toString('hex')}`;
        assignment.run(assignmentId, name, r.itemId, r.left, r.right, annotatorId);
        const seq = submission.run(
          `imp-${crypto.randomBytes(8).toString('hex')}`,
          name,
          assignmentId,
          annotatorId,
          JSON.stringify(r.answer),
          r.submittedAt,
        ).lastInsertRowid;
        annotation.run(assignmentId, name, seq, JSON.stringify(r.answer), r.submittedAt);
      }
      return rows.length;
    })();
  }

  async addStudyEvent(name: string, kind: string, detail: unknown): Promise<void> {
    this.db
      .prepare('INSERT INTO study_events VALUES (?, ?, ?, ?)')
      .run(name, new Date().toISOString(), kind, JSON.stringify(detail));
  }

  async studyEvents(name: string): Promise<Array<{ at: string; kind: string; detail: unknown }>> {
    return (this.db.prepare('SELECT * FROM study_events WHERE study = ? ORDER BY rowid').all(name) as any[]).map(
      (r) => ({ at: r.at, kind: r.kind, detail: JSON.parse(r.detail) }),
    );
  }

  // ---- copying (used by SqliteStore's export and import) ----------------------------
  async dump(name: string): Promise<StudyDump> {
    const inserted = (sql: string) => this.db.prepare(sql).all(name) as any[];
    return studyDump(this, name, {
      assignments: inserted('SELECT * FROM study_assignments WHERE study = ? ORDER BY rowid'),
      annotators: inserted('SELECT * FROM study_annotators WHERE study = ? ORDER BY rowid'),
      annotations: inserted(
        'SELECT n.*, s.submission_id FROM study_annotations n JOIN study_submissions s ON s.seq = n.submission_seq WHERE n.study = ? ORDER BY n.rowid',
      ),
    });
  }

  /** A whole study, inside the caller's transaction; a study already here is kept as it is (returns 0). */
  insertDump(d: StudyDump): number {
    const s = d.study;
    const added = this.db
      .prepare('INSERT OR IGNORE INTO studies VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(s.name, s.runId, s.status, s.createdAt, s.closedAt, s.workflowId, JSON.stringify(s.spec)).changes;
    if (!added) return 0;
    const item = this.db.prepare('INSERT INTO study_items VALUES (?, ?, ?, ?, ?)');
    for (const it of d.items) item.run(s.name, it.itemId, it.queryId, it.first, it.second);
    const assignment = this.db.prepare('INSERT INTO study_assignments VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    for (const a of d.assignments)
      assignment.run(a.assignmentId, s.name, a.itemId, a.slot, a.left, a.right, a.annotatorId, a.order);
    const annotator = this.db.prepare('INSERT INTO study_annotators VALUES (?, ?, ?, ?, ?, ?)');
    for (const a of d.annotators) annotator.run(a.annotatorId, s.name, a.label, a.tokenHash, a.source, a.createdAt);
    const submission = this.db.prepare(
      'INSERT INTO study_submissions (submission_id, study, assignment_id, annotator_id, answer, received_at, status, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const seqOf = new Map<string, number | bigint>();
    for (const x of d.submissions)
      seqOf.set(
        x.submissionId,
        submission.run(
          x.submissionId,
          s.name,
          x.assignmentId,
          x.annotatorId,
          JSON.stringify(x.answer),
          x.receivedAt,
          x.status,
          x.note,
        ).lastInsertRowid,
      );
    const annotation = this.db.prepare('INSERT INTO study_annotations VALUES (?, ?, ?, ?, ?, ?, ?)');
    for (const n of d.annotations)
      annotation.run(
        n.assignmentId,
        s.name,
        seqOf.get(n.submissionId),
        JSON.stringify(n.answer),
        n.revision,
        n.submittedAt,
        n.source,
      );
    const event = this.db.prepare('INSERT INTO study_events VALUES (?, ?, ?, ?)');
    for (const e of d.events) event.run(s.name, e.at, e.kind, JSON.stringify(e.detail));
    return 1;
  }
}
