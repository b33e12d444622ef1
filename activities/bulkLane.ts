/**
 * Bulk work of a worker's activities (an import of held answers: reading files and storing thousands of answers) runs
 * in slices of at most BULK_SLICE_MS, one slice at a time across the whole worker, each on a turn of the event loop of
 * its own. Between two slices the loop serves everything else that is waiting: the workflow's tasks, activity tasks
 * handed over by Temporal, the sockets of judge calls being sent.
 *
 * Why one lane for the worker and not a yield per import: four imports of one run (one per answer file) that each
 * yielded every 5 ms still ran back to back, 20 ms and more between two turns of the loop, and a judge item needs
 * several turns before its request leaves (its activity task, its socket's connect, its write). A run that judges while
 * the rest of its answers are imported sent its first judge requests 0.15–0.25 s late that way (issue 29).
 */

/** How long one slice of bulk work holds the worker's event loop. */
export const BULK_SLICE_MS = 5;

export class BulkLane {
  private held = false;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly sliceMs = BULK_SLICE_MS,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /**
   * Run `work` as bulk work: it calls the `pause` it is given between units of work; a pause returns at once while the
   * slice lasts, else hands the lane on and resumes on a later turn of the loop. `away(wait)` waits for I/O without the
   * lane. The lane is let go when `work` ends or throws.
   */
  async run<T>(
    work: (pause: () => Promise<void>, away: <R>(wait: () => Promise<R>) => Promise<R>) => Promise<T>,
  ): Promise<T> {
    await this.take();
    let sliceStart = this.clock();
    const pause = async () => {
      if (this.clock() - sliceStart < this.sliceMs) return;
      this.give();
      await this.take();
      sliceStart = this.clock();
    };
    // A wait on I/O (a batch stored in PostgreSQL) is made without the lane: the other imports' slices go on meanwhile.
    const away = async <R>(wait: () => Promise<R>): Promise<R> => {
      this.give();
      try {
        return await wait();
      } finally {
        await this.take();
        sliceStart = this.clock();
      }
    };
    try {
      return await work(pause, away);
    } finally {
      this.give();
    }
  }

  /** The lane, on a turn of the event loop of its own (setImmediate), never in the microtasks of the slice before. */
  private take(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      if (!this.held) this.handOn();
    });
  }

  private give(): void {
    this.held = false;
    if (this.waiting.length) this.handOn();
  }

  private handOn(): void {
    this.held = true;
    setImmediate(() => {
      const next = this.waiting.shift();
      if (next) next();
      else this.held = false;
    });
  }
}

/** The worker's one lane (per process: activities of every run on this worker share it). */
export const bulkLane = new BulkLane();
