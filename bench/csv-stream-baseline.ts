/**
 * The baseline of the large-input bench: a bare streaming csv-parse of a file (the same options
 * feedbacklens uses), counting records, as its own process. `node dist/bench/csv-stream-baseline.js <file>`
 */
import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: csv-stream-baseline <file.csv>\n');
  process.exit(2);
}
let records = 0;
const parser = createReadStream(file, { highWaterMark: 64 * 1024 }).pipe(
  parse({ relax_column_count: true, relax_quotes: true, skip_empty_lines: true, bom: true }),
);
for await (const _ of parser) records++;
process.stdout.write(`${records}\n`);
