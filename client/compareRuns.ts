export { compareStoredRuns, defaultCompareDir, gateStoredRuns, writeComparison } from '../services/storedComparison';
