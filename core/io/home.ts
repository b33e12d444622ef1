import path from 'node:path';

/** judgeflow's local state (results store, Temporal data and tools): $JUDGEFLOW_HOME or ./.judgeflow. Only resolves the path; writers create it. */
export function judgeflowHome(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.JUDGEFLOW_HOME?.trim();
  return path.resolve(configured || path.join(process.cwd(), '.judgeflow'));
}

export type Log = (msg: string) => void;
