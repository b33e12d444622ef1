export type IntervalMethod = 't' | 'bca' | 'percentile' | 'studentized';

/** A confidence interval for a mean, with the number of independent units it rests on and how it was made. */
export interface MeanInterval {
  low: number;
  high: number;
  n: number;
  method: IntervalMethod;
}
