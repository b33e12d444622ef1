import path from 'node:path';
import { loadDataFile } from '../../core/io/dataFiles';
import { studyOptionsSchema, type StudyOptions } from '../../core/study/options';

export const DEFAULT_STUDY_OPTIONS_FILE = path.join(__dirname, 'options.yaml');

export function loadStudyOptions(file = DEFAULT_STUDY_OPTIONS_FILE): StudyOptions {
  return loadDataFile(studyOptionsSchema, file, 'study options');
}
