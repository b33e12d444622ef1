import type { Client } from '@temporalio/client';
import { temporalClient } from '../temporalSdk';
import type { ResultsStore } from '../../core/model/store';
import { studyWorkflow } from '../../workflows';
import { submitUpdate } from '../../contract/study';
import { taskQueue } from '../connection';
import { studyWorkflowInput } from './workflow';

/**
 * Delivers stored submissions to their study workflows as Updates, oldest first. The app acknowledges an answer once it
 * is in the results store, so an outage of the worker or of Temporal only delays delivery: this loop keeps retrying
 * (with back-off) until the workflow has recorded each one, and picks up where it left off after an app restart.
 */
export class SubmissionForwarder {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private stopped = false;
  private backoffMs = 0;
  private client: Client | null = null;
  lastError: string | null = null;

  constructor(
    private readonly store: ResultsStore,
    private readonly connect: () => Promise<Client>,
    private readonly opts: {
      updateTimeoutMs?: number;
      maxBackoffMs?: number;
      parallel?: number;
      log?: (line: string) => void;
    } = {},
  ) {}

  start(): void {
    this.kick();
  }

  /** Deliver now (called after every new submission). */
  kick(): void {
    if (this.stopped || this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.drain(), 0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    while (this.running) await new Promise((r) => setTimeout(r, 20));
    await this.client?.connection.close().catch(() => undefined);
  }

  private async drain(): Promise<void> {
    this.running = true;
    this.timer = null;
    let failed = false;
    try {
      for (;;) {
        const pending = await this.store.studies.pendingSubmissions(50);
        if (!pending.length || this.stopped) break;
        // A few at a time: the workflow records them concurrently, and the last received answer wins whatever the order.
        const parallel = this.opts.parallel ?? 8;
        for (let i = 0; i < pending.length && !this.stopped; i += parallel) {
          const results = await Promise.allSettled(
            pending.slice(i, i + parallel).map((s) => this.deliver(s.submissionId, s.study)),
          );
          const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
          if (failure) throw failure.reason;
        }
      }
      this.backoffMs = 0;
      this.lastError = null;
    } catch (error) {
      failed = true;
      this.lastError = (error as Error).message;
      this.backoffMs = Math.min(this.opts.maxBackoffMs ?? 5_000, Math.max(250, this.backoffMs * 2));
      this.opts.log?.(
        `study: could not deliver answers to Temporal yet (${this.lastError}); retrying in ${this.backoffMs} ms — answers are safe in the results store`,
      );
    } finally {
      this.running = false;
    }
    if (failed && !this.stopped) this.timer = setTimeout(() => void this.drain(), this.backoffMs);
  }

  private async deliver(submissionId: string, studyName: string): Promise<void> {
    const study = await this.store.studies.getStudy(studyName);
    if (!study) return this.store.studies.rejectSubmission(submissionId, `study ${studyName} no longer exists`);
    const client = (this.client ??= await this.connect());
    const handle = client.workflow.getHandle(study.workflowId);
    try {
      await client.withDeadline(Date.now() + (this.opts.updateTimeoutMs ?? 10_000), () =>
        handle.executeUpdate(submitUpdate, { args: [{ submissionId }], updateId: submissionId }),
      );
    } catch (error) {
      const current = await this.store.studies.getStudy(studyName);
      const stored = await this.store.studies.getSubmission(submissionId);
      // Closing records every answer stored before it, so what is still pending after a close came in too late.
      if (current?.status === 'closed' && stored?.status === 'pending')
        return this.store.studies.rejectSubmission(submissionId, 'arrived after the study closed');
      if (stored?.status !== 'pending') return;
      if (error instanceof temporalClient().WorkflowNotFoundError && current?.status === 'open') {
        // The workflow was never started (e.g. Temporal was down at `study create`): start it now, then retry.
        await client.workflow
          .start(studyWorkflow, {
            workflowId: study.workflowId,
            taskQueue: await taskQueue(),
            args: [studyWorkflowInput(study)],
          })
          .catch(() => undefined);
      }
      if (error instanceof temporalClient().WorkflowUpdateFailedError)
        this.opts.log?.(
          `study ${studyName}: the workflow refused submission ${submissionId}: ${(error.cause as Error | undefined)?.message ?? error.message}`,
        );
      throw error;
    }
  }
}
