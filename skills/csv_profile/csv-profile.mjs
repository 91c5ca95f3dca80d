#!/usr/bin/env node
// csv_profile compute skill: streams a CSV with csv-parse and speaks JSON lines on stdout
// ({"type":"progress"|"log"|"result"}). Plain ESM JavaScript so it runs without a build step.
import { createReadStream, existsSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, relative, resolve } from 'node:path';
import { parse } from 'csv-parse';

const DISTINCT_CAP = 100_000; // per column: bounded memory on high-cardinality columns
const PROGRESS_EVERY_MS = 200;

const emit = (msg) => process.stdout.write(`${JSON.stringify(msg)}\n`);
const progress = (stage, current, total, message, payload) => emit({ type: 'progress', stage, current, total, message, payload });
const log = (level, message) => emit({ type: 'log', level, message });

function fail(message) {
  process.stderr.write(`csv_profile: ${message}\n`);
  process.exit(1);
}

async function readInput() {
  let raw = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) {
    raw += chunk;
    if (raw.length > 1_000_000) fail('input on stdin is larger than 1 MB');
  }
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw);
  } catch (e) {
    fail(`input on stdin is not JSON (${e.message})`);
  }
}

function insideWorkspace(p) {
  const rel = relative(process.cwd(), p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

function resolveCsv(p) {
  if (typeof p !== 'string' || p.trim() === '') fail('input.csv_path is required (a CSV file in the workspace)');
  let full = resolve(p);
  // The runtime copies file inputs into input/: accept the original name too.
  if (!existsSync(full) && existsSync(resolve('input', basename(p)))) full = resolve('input', basename(p));
  if (!insideWorkspace(full)) fail(`input.csv_path ${JSON.stringify(p)} is outside the workspace`);
  if (!existsSync(full) || !statSync(full).isFile()) fail(`input.csv_path ${JSON.stringify(p)} does not exist`);
  return full;
}

const isNull = (v) => v === undefined || v === null || v.trim() === '' || /^(null|na|n\/a|nan|none)$/i.test(v.trim());

const input = await readInput();
const csvPath = resolveCsv(input.csv_path);
const topN = Number.isInteger(input.top_n) && input.top_n > 0 && input.top_n <= 100 ? input.top_n : 5;
const delimiter = typeof input.delimiter === 'string' && input.delimiter.length === 1 ? input.delimiter : ',';
const outputPath = resolve(typeof input.output_path === 'string' ? input.output_path : 'artifacts/csv_profile.json');
if (!insideWorkspace(outputPath)) fail(`input.output_path ${JSON.stringify(input.output_path)} is outside the workspace`);

// ---- scan
const size = statSync(csvPath).size;
let bytesRead = 0;
let header = null;
let cols = [];
let rows = 0;
let ragged = 0;
let last = 0;
progress('scan', 0, size, `reading ${basename(csvPath)}`);

const file = createReadStream(csvPath);
file.on('data', (b) => (bytesRead += b.length));
const parser = file.pipe(parse({ delimiter, bom: true, skip_empty_lines: true, relax_column_count: true, relax_quotes: true }));
try {
  for await (const record of parser) {
    if (!header) {
      header = record.map((h, i) => String(h).trim() || `column_${i + 1}`);
      cols = header.map((name) => ({ name, nonNull: 0, nulls: 0, counts: new Map(), capped: false, num: 0, min: Infinity, max: -Infinity, sum: 0 }));
      continue;
    }
    rows++;
    if (record.length !== header.length) ragged++;
    for (let i = 0; i < cols.length; i++) {
      const c = cols[i];
      const v = record[i];
      if (isNull(v)) {
        c.nulls++;
        continue;
      }
      c.nonNull++;
      const prev = c.counts.get(v);
      if (prev !== undefined) c.counts.set(v, prev + 1);
      else if (c.counts.size < DISTINCT_CAP) c.counts.set(v, 1);
      else c.capped = true;
      const n = Number(v);
      if (v.trim() !== '' && Number.isFinite(n)) {
        c.num++;
        if (n < c.min) c.min = n;
        if (n > c.max) c.max = n;
        c.sum += n;
      }
    }
    const now = Date.now();
    if (now - last >= PROGRESS_EVERY_MS) {
      last = now;
      progress('scan', bytesRead, size, `${rows} rows`, { rows });
    }
  }
} catch (e) {
  fail(`could not parse ${basename(csvPath)}: ${e.message}`);
}
if (!header) fail(`${basename(csvPath)} is empty`);
progress('scan', size, size, `${rows} rows, ${cols.length} columns`, { rows, columns: cols.length });
if (ragged > 0) log('warning', `${ragged} rows have a different number of fields than the header`);

// ---- aggregate
const columns = [];
for (let i = 0; i < cols.length; i++) {
  const c = cols[i];
  const top = [...c.counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, topN);
  columns.push({
    name: c.name,
    non_null: c.nonNull,
    nulls: c.nulls,
    null_rate: rows ? Number((c.nulls / rows).toFixed(4)) : 0,
    distinct: c.counts.size,
    distinct_capped: c.capped,
    top_values: top.map(([value, count]) => ({ value: value.length > 200 ? `${value.slice(0, 200)}…` : value, count })),
    ...(c.num > 0 && c.num === c.nonNull ? { numeric: { min: c.min, max: c.max, mean: Number((c.sum / c.num).toFixed(4)) } } : {}),
  });
  c.counts = null;
  progress('aggregate', i + 1, cols.length, `column ${c.name}`);
}

// ---- write
const profile = { file: basename(csvPath), bytes: size, rows, ragged_rows: ragged, columns };
progress('write', 0, 1, `writing ${relative(process.cwd(), outputPath)}`);
await mkdir(dirname(outputPath), { recursive: true });
await writeFile(outputPath, `${JSON.stringify(profile, null, 2)}\n`);
progress('write', 1, 1, 'profile written');
emit({ type: 'result', data: { ...profile, output_path: relative(process.cwd(), outputPath) } });
