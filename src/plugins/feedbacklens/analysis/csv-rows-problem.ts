/**
 * Before a run starts: is there anything to analyse in this CSV? A file that is not text (an image,
 * a workbook), an empty file (0 bytes or only whitespace) or a header without rows is an input error
 * the user fixes, not a run that fails.
 * Reads only up to the second record; any other problem is left to the run's own read, which
 * names it with the details.
 */
import { NotUtf8Error } from '../../shared/decode-text.js';
import { notTextProblem } from '../../shared/not-text-problem.js';
import { readRecords } from './feedback-csv-stream.js';

export async function csvRowsProblem(file: string): Promise<string | null> {
  const binary = await notTextProblem(file);
  if (binary) return binary;
  for (const fallback of [false, true]) {
    const first: string[] = [];
    let records = 0;
    try {
      const { sawText } = await readRecords(
        file,
        fallback,
        () => undefined,
        (rec) => {
          if (records === 0) first.push(...rec);
          return ++records < 2;
        },
      );
      if (!sawText || records === 0) return 'the CSV file is empty';
      if (records === 1) return `the CSV has a header (${first.map((h) => h.trim()).join(', ')}) but no data rows`;
      return null;
    } catch (e) {
      // decided on text read as UTF-8: read it again as Windows-1252, as the run would
      if (e instanceof NotUtf8Error && !fallback) continue;
      return null;
    }
  }
  return null;
}
