/** The streaming CSV reader gives the same rows, facts and errors as the whole-file parser. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { streamFeedbackCsv, type RowSink } from '../../src/plugins/feedbacklens/analysis/feedback-csv-stream.js';
import type { FeedbackRow } from '../../src/plugins/feedbacklens/analysis/feedback-row.js';
import { parseFeedbackCsv } from '../../src/plugins/feedbacklens/analysis/parse-feedback-csv.js';
import { decodeText } from '../../src/plugins/shared/decode-text.js';

const dir = mkdtempSync(join(tmpdir(), 'runtrail-csv-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Streams a file into an array, counting sinks begun and aborted. */
async function stream(name: string, content: string | Uint8Array, maxRows?: number) {
  const file = join(dir, name);
  writeFileSync(file, content);
  const log = { begun: 0, aborted: 0, encodings: [] as string[] };
  let rows: FeedbackRow[] = [];
  const r = await streamFeedbackCsv(file, {
    maxRows,
    begin: ({ encoding }): RowSink => {
      log.begun++;
      log.encodings.push(encoding);
      rows = [];
      return {
        add: (row) => void rows.push(row),
        abort: async () => void log.aborted++,
      };
    },
  });
  return { r, rows, log, file };
}

/** The whole-file parse of the same bytes, in the shape the stream gives. */
function whole(file: string, maxRows?: number) {
  const { text, encoding } = decodeText(readFileSync(file));
  return { parsed: parseFeedbackCsv(text, { maxRows }), encoding };
}

async function expectSame(name: string, content: string | Uint8Array, maxRows?: number) {
  const s = await stream(name, content, maxRows);
  const w = whole(s.file, maxRows);
  if (!w.parsed.ok) {
    expect(s.r).toEqual({ ok: false, error: w.parsed.error });
    return s;
  }
  expect(s.r.ok).toBe(true);
  if (!s.r.ok) return s;
  const { rows, ...facts } = w.parsed.value;
  expect(s.rows).toEqual(rows);
  expect(s.r.value).toEqual({ ...facts, encoding: w.encoding, rows: rows.length });
  return s;
}

const many = (n: number, line: (i: number) => string, header: string): string => [header, ...Array.from({ length: n }, (_, i) => line(i))].join('\n');

describe('streamFeedbackCsv', () => {
  it.each([
    ['quoted commas and newlines', 'id,text,rating,channel\n1,"Sync fails, every morning",1,email\n2,"Great board view\nwith colours",5,app_store\n'],
    ['generated ids', 'feedback,rating\n"Sync keeps failing, lost my edits",1\nLove the calendar view,5\n'],
    ['duplicate and missing ids', 'id,text\n1,sync fails again\n1,export is slow\n,no id here at all\n1,third time the same id\n'],
    ['semicolons, CRLF and doubled quotes', 'ID;Content;Rating\r\n1;"Crashes on start,\r\nevery time";1\r\n2;"Nice ""dark"" mode";5\r\n'],
    ['a text column found by content', many(300, (i) => `${i},this sentence has several words in it ${i}`, 'a,b')],
  ])('reads %s like the whole-file parser', async (name, csv) => {
    await expectSame(`${name}.csv`, csv);
  });

  it('reads a BOM, UTF-16 and Windows-1252 the way decodeText decides', async () => {
    expect((await expectSame('bom.csv', new Uint8Array([0xef, 0xbb, 0xbf, ...Buffer.from('text\nCafé crashed\n')]))).r).toMatchObject({
      value: { encoding: 'utf-8-bom' },
    });
    expect((await expectSame('u16.csv', new Uint8Array([0xff, 0xfe, ...Buffer.from('id,text\n1,Café crashed\n', 'utf16le')]))).r).toMatchObject({
      value: { encoding: 'utf-16le' },
    });
    expect((await expectSame('cp.csv', new Uint8Array([...Buffer.from('text\nThe caf'), 0xe9, ...Buffer.from(' page crashes\n')]))).r).toMatchObject({
      value: { encoding: 'windows-1252' },
    });
  });

  it('starts over as Windows-1252 when a byte that is not UTF-8 comes after rows were already handed on', async () => {
    // well past the first read and the first 200 rows: the first sink has rows when the byte comes
    const head = Buffer.from(many(3000, (i) => `${i},the export to excel fails again number ${i}`, 'id,text'));
    const s = await expectSame('late-cp1252.csv', Buffer.concat([head, Buffer.from('\n3000,caf'), Buffer.from([0xe9]), Buffer.from(' crashed\n')]));
    expect(s.log).toEqual({ begun: 2, aborted: 1, encodings: ['utf-8', 'windows-1252'] });
    expect(s.rows).toHaveLength(3001);
    expect(s.rows.at(-1)?.text).toBe('café crashed');
  });

  it('decides the text column from a value further down when the text header is empty in the first 200 rows', async () => {
    const csv = many(300, (i) => (i < 250 ? `${i},,some words here and there ${i}` : `${i},the real feedback text ${i},x`), 'id,text,other');
    const s = await expectSame('late-text.csv', csv);
    expect(s.r).toMatchObject({ ok: true, value: { textColumn: 'text', rows: 50 } });
  });

  it('honours maxRows and still counts every data row', async () => {
    const s = await expectSame(
      'max.csv',
      many(500, (i) => `row ${i} text`, 'text'),
      10,
    );
    expect(s.r).toMatchObject({ ok: true, value: { rows: 10, totalDataRows: 500, truncated: true } });
  });

  it.each([
    ['an empty file', ''],
    ['whitespace only', '   \n  \n'],
    ['a header without rows', 'id,text\n'],
    ['no text column', 'name,age\nalice,31\nbob,42\n'],
    ['no text column in a long file', many(300, (i) => `alice${i},${i}`, 'name,age')],
    ['an empty text column', 'id,text,channel\n1,,web\n2,  ,ios\n'],
    ['an empty text column in a long file', many(300, (i) => `${i},,`, 'id,text,notes')],
    ['an unclosed quote', 'id,text\n1,"unclosed\n2,ok\n'],
  ])('fails on %s with the whole-file parser’s message, handing on no rows', async (name, csv) => {
    const s = await expectSame(`${name}.csv`, csv);
    expect(s.r.ok).toBe(false);
    expect(s.log.begun).toBe(s.log.aborted);
  });
});
