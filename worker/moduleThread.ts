import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A thread running the module `file` with `options`: the compiled file as it is, or a source file (.ts, a worker run
 * from the sources) compiled by tsx first, as bin/judgeflow.js does for the process.
 */
export function moduleThread(file: string, options: WorkerOptions): Worker {
  return file.endsWith('.ts')
    ? new Worker(`require('tsx/cjs'); require(${JSON.stringify(file)});`, { ...options, eval: true })
    : new Worker(file, options);
}
