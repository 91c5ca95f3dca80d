import { describe, expect, it } from 'vitest';
import { decodeText } from '../../src/plugins/shared/decode-text.js';
import { parseFeedbackCsv } from '../../src/plugins/feedbacklens/analysis/parse-feedback-csv.js';
import { contentTokens, stem, termsOf } from '../../src/plugins/shared/tokenize.js';
import { scoreSentiment, ratingScale, normaliseRating } from '../../src/plugins/feedbacklens/analysis/sentiment-score.js';
import { clusterThemes } from '../../src/plugins/feedbacklens/analysis/theme-clustering.js';
import { isVerbatimQuote, selectQuote } from '../../src/plugins/feedbacklens/analysis/select-quote.js';
import { analyseFeedback, priorityOf, severityOf, themeTitle } from '../../src/plugins/feedbacklens/analysis/analyse-feedback.js';

function rows(csv: string) {
  const r = parseFeedbackCsv(csv);
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

describe('decodeText', () => {
  it('strips a UTF-8 BOM', () => {
    const r = decodeText(new Uint8Array([0xef, 0xbb, 0xbf, ...Buffer.from('id,text')]));
    expect(r).toEqual({ text: 'id,text', encoding: 'utf-8-bom' });
  });
  it('decodes UTF-16LE with BOM', () => {
    const body = Buffer.from('text\nCafé crashed', 'utf16le');
    const r = decodeText(new Uint8Array([0xff, 0xfe, ...body]));
    expect(r.encoding).toBe('utf-16le');
    expect(r.text).toBe('text\nCafé crashed');
  });
  it('falls back to Windows-1252 when the bytes are not UTF-8', () => {
    const r = decodeText(new Uint8Array([...Buffer.from('text\nCaf'), 0xe9, ...Buffer.from(' '), 0x93, 0x61, 0x94]));
    expect(r.encoding).toBe('windows-1252');
    expect(r.text).toBe('text\nCafé “a”');
  });
});

describe('parseFeedbackCsv', () => {
  it('keeps quoted commas and newlines inside one row', () => {
    const v = rows('id,text,rating\n1,"Slow, very slow\nand crashes",2\n2,Fine,5\n');
    expect(v.rows).toHaveLength(2);
    expect(v.rows[0]).toMatchObject({ feedback_id: '1', text: 'Slow, very slow\nand crashes', rating: 2 });
  });
  it('recognises header aliases regardless of case and spacing', () => {
    const v = rows('Feedback ID;Comment;Stars;Source;Created At\nA-1;Great app;5;email;2026-01-02\n');
    expect(v.idColumn).toBe('Feedback ID');
    expect(v.textColumn).toBe('Comment');
    expect(v.rows[0]).toMatchObject({ feedback_id: 'A-1', text: 'Great app', rating: 5, channel: 'email', date: '2026-01-02' });
  });
  it('generates row-<n> ids when there is no id column', () => {
    const v = rows('content,score\nfirst,1\nsecond,2\n');
    expect(v.idSource).toBe('generated');
    expect(v.rows.map((r) => r.feedback_id)).toEqual(['row-1', 'row-2']);
  });
  it('fills blank ids and de-duplicates repeated ids', () => {
    const v = rows('id,text\n7,a\n,b\n7,c\n');
    expect(v.rows.map((r) => r.feedback_id)).toEqual(['7', 'row-2', '7-dup2']);
  });
  it('skips rows with empty text and counts them', () => {
    const v = rows('id,text\n1,hello\n2,  \n3,world\n');
    expect(v.rows.map((r) => r.feedback_id)).toEqual(['1', '3']);
    expect(v.skippedBlank).toBe(1);
  });
  it('uses the longest non-numeric column when no text header is known', () => {
    const v = rows('num,whatever\n1,the sync is broken again today\n2,pricing is too high for us\n');
    expect(v.textColumn).toBe('whatever');
    expect(v.warnings[0]).toMatch(/whatever/);
  });
  it('chooses the text column by content when no header names it: sentences, not the longest column', () => {
    const v = rows(
      [
        'customer,link,remarks',
        'Alice Johnson,https://example.com/accounts/alice-johnson/settings/export?tab=history,the export keeps failing on large files',
        'Bob Lee,https://example.com/accounts/bob-lee/settings/notifications?tab=email,notifications arrive a day late',
        'Chen Wei,https://example.com/accounts/chen-wei/settings/billing?tab=invoices,I was charged twice this month',
      ].join('\n'),
    );
    expect(v.textColumn).toBe('remarks');
    expect(v.warnings[0]).toMatch(/no known text header; using column "remarks"/);
  });
  it('refuses a file where no column holds free text, listing the columns and how to name the text column', () => {
    const r = parseFeedbackCsv('name,age\nalice,31\nbob,42\n');
    expect(r.ok).toBe(false);
    const e = r.ok ? '' : r.error;
    expect(e).toContain('no column holds free-text feedback');
    expect(e).toContain('columns found: "name" ("alice"), "age" ("31")');
    expect(e).toMatch(
      /Name the column that holds the feedback text one of "text", "feedback", "feedback_text", "comment", "反馈内容", "コメント", "comentario", "commentaire", "kommentar", "comentário"/,
    );
    // categories repeated down a column are not feedback either
    const cat = parseFeedbackCsv(['id,kind,status', ...Array.from({ length: 12 }, (_, i) => `${i},Feature request,In progress`)].join('\n'));
    expect(!cat.ok && cat.error).toMatch(/no column holds free-text feedback/);
  });
  it('refuses a file whose text column is empty in every row and no other column holds text', () => {
    const r = parseFeedbackCsv('id,text,channel\n1,,web\n2,  ,ios\n');
    expect(!r.ok && r.error).toMatch(/the text column "text" is empty in every row .*columns found: "id" \("1"\), "text" \(empty\), "channel" \("web"\)/);
  });
  it('falls back to a column of sentences when the named text column is empty', () => {
    const v = rows('id,text,notes\n1,,the calendar sync stopped working again\n2,,search never finds my old notes\n');
    expect(v.textColumn).toBe('notes');
    expect(v.warnings[0]).toMatch(/"text" is empty in every row; using column "notes"/);
  });
  it.each([
    ['Chinese', '编号,反馈内容,平台,评分,日期', 'FK-1,同步太慢了，改完笔记要等好几分钟才能看到,iOS,2,2026-05-01'],
    ['Traditional Chinese', '編號,回饋內容,來源,評分,時間', 'FK-1,同步太慢了,iOS,2,2026-05-01'],
    ['Japanese', '番号,コメント,プラットフォーム,評価,日付', 'FK-1,同期が遅すぎます,iOS,2,2026-05-01'],
    ['Spanish', 'ID,Comentario,Plataforma,Valoración,Fecha', 'FK-1,La sincronización es muy lenta,iOS,2,2026-05-01'],
    ['French', 'Identifiant;Commentaire;Canal;Note;Date', 'FK-1;La synchronisation est trop lente;iOS;2;2026-05-01'],
    ['German', 'Nr;Kommentar;Plattform;Bewertung;Datum', 'FK-1;Die Synchronisierung ist viel zu langsam;iOS;2;2026-05-01'],
    ['Portuguese', 'Código,Comentário,Plataforma,Nota,Data', 'FK-1,A sincronização é muito lenta,iOS,2,2026-05-01'],
  ])('recognises %s headers for id, text, rating, channel and date', (_lang, header, row) => {
    const v = rows(`${header}\n${row}\n`);
    expect(v.idSource).toBe('column');
    expect(v.rows[0]).toMatchObject({ feedback_id: 'FK-1', rating: 2, channel: 'iOS', date: '2026-05-01', extra: {} });
    expect(v.textColumn).toBe(header.split(/[;,]/)[1]);
    expect(v.warnings).toEqual([]);
  });
  it('reads ratings written with units or stars, and ignores a rating header holding text', () => {
    const v = rows('id,text,评分\n1,好用,4星\n2,不好用,★★☆☆☆\n3,一般,3 分\n4,ok,4/5\n');
    expect(v.rows.map((r) => r.rating)).toEqual([4, 2, 3, 4]);
    const t = rows('id,text,rating\n1,slow sync,great product\n2,crashes,meh\n');
    expect(t.ratingColumn).toBeNull();
    expect(t.rows[0].extra).toEqual({ rating: 'great product' });
    expect(t.warnings).toContain('column "rating" does not hold numeric ratings; ratings ignored');
  });
  it('honours maxRows', () => {
    const r = parseFeedbackCsv('text\na\nb\nc\n', { maxRows: 2 });
    expect(r.ok && r.value.rows.length).toBe(2);
    expect(r.ok && r.value.truncated).toBe(true);
  });
  it('rejects an empty file, a header without rows, and a file without text', () => {
    expect(parseFeedbackCsv('')).toEqual({ ok: false, error: 'the CSV file is empty' });
    const h = parseFeedbackCsv('id,text\n');
    expect(!h.ok && h.error).toMatch(/no data rows/);
    const n = parseFeedbackCsv('id,rating\n1,2\n2,3\n');
    expect(!n.ok && n.error).toMatch(/no text column/);
  });
});

describe('tokenize', () => {
  it('merges inflections into one stem', () => {
    expect(new Set(['sync', 'syncing', 'synced', 'syncs'].map(stem))).toEqual(new Set(['sync']));
    expect(new Set(['crash', 'crashes', 'crashed', 'crashing'].map(stem))).toEqual(new Set(['crash']));
    expect(new Set(['price', 'prices', 'pricing'].map(stem)).size).toBe(1);
  });
  it('drops stop words and numbers, and forms bigrams only from adjacent words', () => {
    expect(contentTokens('The app is 100 times slower').map((t) => t.word)).toEqual(['slower']);
    expect(termsOf('calendar sync fails').terms).toEqual(['calendar', 'calendar sync', 'sync', 'sync fail', 'fail']);
    expect(termsOf('calendar and sync').terms).toEqual(['calendar', 'sync']);
  });
});

describe('sentiment', () => {
  it('labels by the AFINN lexicon and lets a rating pull the label', () => {
    expect(scoreSentiment('I love it, fantastic work', null).label).toBe('positive');
    expect(scoreSentiment('terrible, it crashed and I hate it', null).label).toBe('negative');
    expect(scoreSentiment('the button is blue', null).label).toBe('neutral');
    expect(scoreSentiment('the button is blue', 0).label).toBe('negative');
  });
  it('detects rating scales', () => {
    expect(ratingScale([1, 5, null])).toEqual({ min: 1, max: 5 });
    expect(ratingScale([0, 9])).toEqual({ min: 0, max: 10 });
    expect(ratingScale([null])).toBeNull();
    expect(normaliseRating(3, { min: 1, max: 5 })).toBe(0.5);
  });
});

describe('clusterThemes', () => {
  const texts = [
    ...Array.from({ length: 12 }, (_, i) => `Invoice ${['totals', 'amounts', 'numbers'][i % 3]} are wrong on the invoice page, refund please`),
    ...Array.from({ length: 10 }, (_, i) => `The login screen ${['freezes', 'hangs', 'loops'][i % 3]} after password reset`),
    ...Array.from({ length: 8 }, (_, i) => `Export to spreadsheet ${['fails', 'breaks', 'times out'][i % 3]} for big reports`),
  ];
  it('groups rows by shared salient terms without knowing the topics', () => {
    const r = clusterThemes(texts);
    expect(r.clusters.length).toBeGreaterThanOrEqual(3);
    const byLabel = (word: string) => r.clusters.find((c) => c.keyTermLabels.join(' ').includes(word));
    expect(byLabel('invoice')?.members.every((d) => d < 12)).toBe(true);
    expect(byLabel('login')?.members.every((d) => d >= 12 && d < 22)).toBe(true);
    expect(byLabel('export')?.members.every((d) => d >= 22)).toBe(true);
  });
  it('makes one theme of a single row', () => {
    const r = clusterThemes(['The dark mode toggle resets every morning']);
    expect(r.clusters).toHaveLength(1);
    expect(r.clusters[0].members).toEqual([0]);
    expect(r.clusters[0].keyTerms.length).toBeGreaterThan(0);
  });
  it('never uses ignored words (the product name) as labels', () => {
    const r = clusterThemes(
      texts.map((t) => `Acme ${t}`),
      { ignoreWords: ['Acme'] },
    );
    expect(r.clusters.flatMap((c) => c.keyTermLabels).some((l) => l.includes('acme'))).toBe(false);
  });
});

describe('selectQuote', () => {
  const long =
    'I have used the tool for two years and generally like it. ' +
    'But the calendar sync now fails every single morning and I miss meetings. ' +
    'Support told me to reinstall, which did nothing. '.repeat(3);
  it('quotes short rows whole', () => {
    expect(selectQuote('  Crash on start.  ')).toBe('Crash on start.');
  });
  it('picks the sentence carrying the theme terms, verbatim', () => {
    const q = selectQuote(long, ['calendar', 'sync']);
    expect(q).toBe('But the calendar sync now fails every single morning and I miss meetings.');
    expect(isVerbatimQuote(q, long)).toBe(true);
  });
  it('treats whitespace runs as equal but nothing else', () => {
    expect(isVerbatimQuote('sync  now\nfails', 'the sync now fails')).toBe(true);
    expect(isVerbatimQuote('sync fails', 'the sync now fails')).toBe(false);
    expect(isVerbatimQuote('   ', 'anything')).toBe(false);
  });
});

describe('analyseFeedback', () => {
  it('ranks a frequent, negative, low-rated theme above a praised one', () => {
    const csv = [
      'id,text,rating',
      ...Array.from({ length: 15 }, (_, i) => `n${i},"The upload fails and I lose my files, awful",1`),
      ...Array.from({ length: 10 }, (_, i) => `p${i},"Love the beautiful dashboard design, great",5`),
    ].join('\n');
    const s = analyseFeedback(rows(csv).rows);
    expect(s.themes[0].key_terms.join(' ')).toMatch(/upload|fail|lose/);
    expect(s.themes[0]).toMatchObject({ sentiment: 'negative', priority: 'P0' });
    const praise = s.themes.find((t) => t.sentiment === 'positive');
    expect(praise?.severity).toBe('low');
    expect(s.sentiment.negative).toBe(15);
    expect(s.average_rating).toBe(2.6);
  });
  it('names a theme by its subject, not by praise words', () => {
    expect(themeTitle(['love', 'board view', 'card'])).toBe('Board view');
    expect(themeTitle(['love', 'card', 'nice'])).toBe('Card');
    // never a pair of unrelated words ("Load & list"): the leading term, or a phrase that grows it
    expect(themeTitle(['great', 'love'])).toBe('Great');
    expect(themeTitle(['crashes', 'android'])).toBe('Crashes');
    expect(themeTitle(['calendar', 'calendar sync', 'outlook'], 'en', ['calendar', 'calendar sync', 'outlook'])).toBe('Calendar sync');
    expect(themeTitle(['load', 'list'])).toBe('Load');
    // a Chinese label that cuts a word off names nothing
    expect(themeTitle(['台设备', '同步失败'], 'zh', ['台 设备', '同步 失败'])).toBe('同步失败');
    expect(themeTitle(['版太贵了', '价格'], 'zh')).toBe('价格');
    expect(themeTitle([])).toBe('General feedback');
  });
  it('maps scores to severities and priorities at the documented thresholds', () => {
    expect([0.1, 0.25, 0.45, 0.65].map(severityOf)).toEqual(['low', 'medium', 'high', 'critical']);
    expect([0.05, 0.1, 0.25, 0.45].map(priorityOf)).toEqual(['P3', 'P2', 'P1', 'P0']);
  });
});
