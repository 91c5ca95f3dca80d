/**
 * Feedback in Chinese, Japanese and Spanish (hand-written fixtures with known themes): the themes
 * are found, named with whole words, scored from ratings and the language's lexicon, and quoted
 * verbatim under the file's own ids.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { analyseFeedback, type FeedbackStats, type ThemeSummary } from '../../src/plugins/feedbacklens/analysis/analyse-feedback.js';
import { parseFeedbackCsv } from '../../src/plugins/feedbacklens/analysis/parse-feedback-csv.js';
import { scoreSentiment } from '../../src/plugins/feedbacklens/analysis/sentiment-score.js';
import { createFeedbackLensPlugin } from '../../src/plugins/feedbacklens/feedbacklens-plugin.js';
import { contentTokens, termsOf } from '../../src/plugins/shared/tokenize.js';
import { detectCorpusLanguage } from '../../src/plugins/shared/text-language.js';
import { driveOffline } from './helpers/offline-driver.js';
import { createTempWorkspace, type TempWorkspace } from './helpers/temp-workspace.js';

const STOPWORDS = createRequire(import.meta.url)('stopwords-iso') as Record<string, string[]>;

interface Planted {
  ids: number[];
  /** words one of which names the theme (in its title or first two key terms) */
  words: string[];
  problem: boolean;
}

const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);

const FIXTURES: Record<'zh' | 'ja' | 'es', { file: string; prefix: string; themes: Record<string, Planted> }> = {
  zh: {
    file: 'test/fixtures/feedback-zh.csv',
    prefix: 'FK-',
    themes: {
      sync: { ids: [...range(1, 10), 26], words: ['同步'], problem: true },
      crash: { ids: [...range(11, 18), 27, 28], words: ['闪退', '崩溃'], problem: true },
      price: { ids: [...range(19, 25), 29], words: ['价格', '太贵', '价格太贵', '会员'], problem: true },
      praise: { ids: range(30, 36), words: ['界面', '设计'], problem: false },
    },
  },
  ja: {
    file: 'test/fixtures/feedback-ja.csv',
    prefix: 'JP-',
    themes: {
      sync: { ids: [...range(1, 9), 24], words: ['同期'], problem: true },
      crash: { ids: [...range(10, 16), 25, 26], words: ['クラッシュ', 'アプリ', '落ち'], problem: true },
      price: { ids: [...range(17, 23), 27], words: ['料金', '値上げ'], problem: true },
      praise: { ids: range(28, 34), words: ['デザイン'], problem: false },
    },
  },
  es: {
    file: 'test/fixtures/feedback-es.csv',
    prefix: 'ES-',
    themes: {
      sync: { ids: [...range(1, 10), 25], words: ['sincronización'], problem: true },
      crash: { ids: [...range(11, 17), 26, 27], words: ['cierra', 'aplicación'], problem: true },
      price: { ids: [...range(18, 24), 28], words: ['precio', 'caro'], problem: true },
      praise: { ids: range(29, 35), words: ['diseño'], problem: false },
    },
  },
};

const idOf = (prefix: string, n: number): string => `${prefix}${String(n).padStart(3, '0')}`;

function load(lang: keyof typeof FIXTURES) {
  const fx = FIXTURES[lang];
  const parsed = parseFeedbackCsv(readFileSync(fx.file, 'utf8'));
  if (!parsed.ok) throw new Error(parsed.error);
  return { fx, parsed: parsed.value, stats: analyseFeedback(parsed.value.rows) };
}

/** The theme named by one of `words`: in its title or its first two key terms. */
function themeNamed(stats: FeedbackStats, words: string[]): ThemeSummary | undefined {
  return stats.themes.find((t) => words.some((w) => t.title.toLowerCase().includes(w) || t.key_terms.slice(0, 2).some((k) => k.includes(w))));
}

/** Where ICU puts word boundaries in a text, as UTF-16 offsets. */
function boundaries(text: string, lang: string): Set<number> {
  const out = new Set<number>([0]);
  for (const s of new Intl.Segmenter(lang, { granularity: 'word' }).segment(text)) out.add(s.index + s.segment.length);
  return out;
}

/** A label is whole words when it occurs in some row starting and ending on word boundaries. */
function isWholeWords(label: string, texts: string[], lang: string): boolean {
  return texts.some((raw) => {
    const text = raw.toLowerCase().normalize('NFKC');
    const b = boundaries(text, lang);
    for (let at = text.indexOf(label); at >= 0; at = text.indexOf(label, at + 1)) {
      if (b.has(at) && b.has(at + label.length)) return true;
    }
    return false;
  });
}

describe.each(['zh', 'ja', 'es'] as const)('feedback written in %s', (lang) => {
  it('keeps the file’s own ids and reads its ratings', () => {
    const { fx, parsed } = load(lang);
    expect(parsed.idSource).toBe('column');
    expect(parsed.rows.every((r) => new RegExp(`^${fx.prefix}\\d{3}$`).test(r.feedback_id))).toBe(true);
    expect(parsed.ratingColumn).not.toBeNull();
    expect(parsed.rows.every((r) => r.rating !== null)).toBe(true);
  });

  it('detects the language', () => {
    const { stats } = load(lang);
    expect(stats.language.code).toBe(lang);
    expect(stats.language.sentiment_lexicon).toBeTruthy();
  });

  it('finds each planted theme once, with its rows, named by the word a reader expects', () => {
    const { fx, stats } = load(lang);
    for (const [name, planted] of Object.entries(fx.themes)) {
      const ids = new Set(planted.ids.map((n) => idOf(fx.prefix, n)));
      const t = themeNamed(stats, planted.words);
      expect(t, `${name}: no theme named ${planted.words.join('/')} in ${stats.themes.map((x) => x.title).join(' | ')}`).toBeDefined();
      const members = (t as ThemeSummary).feedback_ids;
      const recall = members.filter((id) => ids.has(id)).length / ids.size;
      const precision = members.filter((id) => ids.has(id)).length / members.length;
      expect(recall, `${name} recall`).toBeGreaterThanOrEqual(0.75);
      expect(precision, `${name} precision`).toBeGreaterThanOrEqual(0.7);
      // one problem, one theme: no second theme holds a good part of these rows
      const holding = stats.themes.filter((x) => x.feedback_ids.filter((id) => ids.has(id)).length >= Math.max(2, ids.size * 0.3));
      expect(
        holding.map((x) => x.title),
        `${name} split`,
      ).toHaveLength(1);
    }
  });

  it('scores problems negative and urgent from ratings and the lexicon, praise positive and P3', () => {
    const { fx, stats } = load(lang);
    for (const [name, planted] of Object.entries(fx.themes)) {
      const t = themeNamed(stats, planted.words) as ThemeSummary;
      if (planted.problem) {
        expect(t.sentiment, name).toBe('negative');
        expect(t.negative_share, name).toBeGreaterThanOrEqual(0.7);
        expect(['P0', 'P1'], name).toContain(t.priority);
        expect(['high', 'critical'], name).toContain(t.severity);
      } else {
        expect(t.sentiment, name).toBe('positive');
        expect(t.priority, name).toBe('P3');
      }
    }
    expect(stats.themes.some((t) => t.priority === 'P0')).toBe(true);
  });

  it('labels themes with whole words, never character pairs or stop words', () => {
    const { parsed, stats } = load(lang);
    const texts = parsed.rows.map((r) => r.text);
    const stop = new Set(STOPWORDS[lang]);
    for (const t of stats.themes) {
      for (const term of t.key_terms) {
        const parts = lang === 'es' ? term.split(' ') : [term];
        for (const p of parts) {
          expect(isWholeWords(p, texts, lang), `"${p}" of theme "${t.title}" is not whole words`).toBe(true);
          expect(stop.has(p), `"${p}" of theme "${t.title}" is a stop word`).toBe(false);
        }
      }
    }
  });

  it('runs offline end to end: quotes verbatim under the file’s ids, every stop check passing', async () => {
    const { fx } = load(lang);
    const ws: TempWorkspace = createTempWorkspace();
    try {
      const csv = ws.addInput('feedback.csv', readFileSync(fx.file));
      const r = await driveOffline(createFeedbackLensPlugin(), { csv_path: csv, product_name: 'Notes' }, ws);
      expect(r.error).toBeUndefined();
      expect(r.issues).toEqual([]);
      const analysis = JSON.parse(readFileSync(`${ws.root}/artifacts/feedback_analysis.json`, 'utf8'));
      const rows = new Map(load(lang).parsed.rows.map((x) => [x.feedback_id, x.text]));
      const evidence = analysis.themes.flatMap((t: { evidence: Array<{ feedback_id: string; evidence_text: string }> }) => t.evidence);
      expect(evidence.length).toBeGreaterThanOrEqual(4);
      for (const e of evidence) {
        expect(e.feedback_id.startsWith(fx.prefix)).toBe(true);
        expect(rows.get(e.feedback_id)).toContain(e.evidence_text);
      }
      expect(analysis.source.id_source).toBe('column');
      const backlog = JSON.parse(readFileSync(`${ws.root}/artifacts/product_backlog.json`, 'utf8'));
      expect(backlog.items[0].priority).toBe('P0');
      const report = readFileSync(`${ws.root}/artifacts/insight_report.md`, 'utf8');
      expect(report).toMatch(new RegExp(`Language: \\w+ \\(${lang}\\)`));
      expect(report).toMatch(/Sentiment: .*package/);
    } finally {
      ws.dispose();
    }
  });
});

describe('word segmentation and stop words', () => {
  it('splits Chinese into words (Intl.Segmenter), rejoining words ICU does not know', () => {
    const words = contentTokens('同步太慢了，改完笔记要等好几分钟才能在另一台设备上看到', 'zh').map((t) => t.word);
    expect(words).toContain('同步');
    expect(words).toContain('笔记');
    expect(words).toContain('设备');
    expect(words).not.toContain('步太');
    expect(contentTokens('应用闪退太频繁了', 'zh').map((t) => t.word)).toContain('闪退');
    // a term never spans a clause boundary, and two words join without a space
    expect(termsOf('价格太贵，学生', 'zh').surfaces).toContain('价格太贵');
    expect(termsOf('价格太贵，学生', 'zh').terms).not.toContain('太贵 学生');
  });
  it('splits Japanese into words and drops particles', () => {
    const words = contentTokens('同期が遅すぎて、スマホに反映されません', 'ja').map((t) => t.word);
    expect(words).toContain('同期');
    expect(words).toContain('スマホ');
    expect(words).not.toContain('が');
  });
  it('drops Spanish stop words and stems Spanish words with a Spanish stemmer', () => {
    expect(contentTokens('La sincronización es muy lenta y no funciona', 'es').map((t) => t.word)).toEqual(['sincronización', 'lenta', 'funciona']);
    expect(new Set(['cierra', 'cierre'].map((w) => contentTokens(w, 'es')[0].stem)).size).toBe(1);
    expect(new Set(['móvil', 'móviles'].map((w) => contentTokens(w, 'es')[0].stem)).size).toBe(1);
  });
  it('detects the corpus language by script and by trigrams', () => {
    expect(detectCorpusLanguage(['同步太慢了', '价格太贵']).code).toBe('zh');
    expect(detectCorpusLanguage(['同期が遅い', '料金が高い']).code).toBe('ja');
    expect(detectCorpusLanguage(['La sincronización es muy lenta', 'El precio es demasiado alto para nosotros']).code).toBe('es');
    expect(detectCorpusLanguage(['The sync is slow and the price is too high for us']).code).toBe('en');
  });
});

describe('sentiment beyond English, with negation', () => {
  it.each([
    ['zh', '应用经常崩溃，同步失败', 'negative'],
    ['zh', '非常满意', 'positive'],
    ['zh', '不满意', 'negative'],
    ['zh', '不稳定', 'negative'],
    ['zh', '没有任何问题', 'positive'],
    ['zh', '不能同步', 'negative'],
    ['ja', 'アプリがすぐクラッシュします', 'negative'],
    ['ja', 'とても使いやすいです', 'positive'],
    ['ja', '使いやすくない', 'negative'],
    ['ja', '問題ありません', 'positive'],
    ['es', 'el editor es excelente', 'positive'],
    ['es', 'no es buena', 'negative'],
    ['es', 'la sincronización falla', 'negative'],
    ['es', 'no funciona', 'negative'],
    ['fr', "l'application est excellente", 'positive'],
    ['fr', "ce n'est pas bien", 'negative'],
    ['de', 'die App ist nicht gut', 'negative'],
    ['pt', 'o aplicativo é ótimo', 'positive'],
    ['pt', 'não é bom', 'negative'],
  ])('%s: %s → %s without a rating', (lang, text, label) => {
    expect(scoreSentiment(text, null, lang).label).toBe(label);
  });
  it('falls back on the rating alone for a language without a lexicon', () => {
    expect(scoreSentiment('สวัสดี', 0, 'th').label).toBe('negative');
    expect(scoreSentiment('สวัสดี', 1, 'th').label).toBe('positive');
    expect(scoreSentiment('สวัสดี', null, 'th').label).toBe('neutral');
  });
});
