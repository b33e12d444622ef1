export { compareStoredRuns, defaultCompareDir, gateStoredRuns, writeComparison } from '../activities/storedComparison';
