/**
 * Feedback exports with known truth, drawn from a seed: a product, 5–9 complaint topics with
 * long-tail sizes, segment columns (platform, plan) whose values lean differently per topic, dates
 * over a quarter with one topic growing, rows in one language or a mix with 10–40% of a second,
 * filler phrases on 10–40% of rows across topics, near-duplicates, the product's name and words in
 * most rows, greetings, sign-offs, praise before a complaint, typos. The goal names a segment (or
 * none), and the analysed segment's largest topic is clearly the largest (by 15% at least). Every
 * row carries its true topic; the CSV the analysis reads does not.
 */
import { seededRandom } from '../../src/plugins/shared/seeded-random.js';
import { FILLER, GREETINGS, type HarnessLang, PRAISE, PRODUCT_MENTIONS, PRODUCTS, type Product, SIGN_OFFS, TOPICS } from './feedback-vocabulary.js';

/** A file's languages: one, or a main one with 10–40% of rows in a second. */
export type LanguageMix = 'en' | 'es' | 'zh' | 'en+es' | 'en+zh';
export const LANGUAGE_MIXES: LanguageMix[] = ['en', 'es', 'zh', 'en+es', 'en+zh'];

export interface TruthRow {
  id: string;
  topic: string;
  lang: HarnessLang;
  /** a near-duplicate of an earlier row */
  duplicate: boolean;
  filler: boolean;
}

export interface GeneratedExport {
  seed: number;
  mix: LanguageMix;
  product: Product;
  goal: string;
  /** the column and value the goal names, or null: every row is analysed */
  segment: { column: string; value: string } | null;
  csv: string;
  rows: TruthRow[];
  topics: string[];
  /** the topic whose rows grow over the quarter */
  growing: string;
  /** the analysed rows' largest topic */
  largest: string;
}

type Rand = () => number;
const PLATFORMS = ['iOS', 'Android', 'Web'];
const PLANS = ['Free', 'Pro', 'Team'];

const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const between = (r: Rand, lo: number, hi: number): number => lo + r() * (hi - lo);

/** Weights leaning to one value: each topic's platform and plan mix. */
function leaning(r: Rand, k: number): number[] {
  const w = Array.from({ length: k }, () => 0.2 + r());
  w[Math.floor(r() * k)] += 1.5;
  const s = w.reduce((a, b) => a + b, 0);
  return w.map((x) => x / s);
}

function drawIndex(r: Rand, weights: number[]): number {
  let x = r();
  for (let i = 0; i < weights.length; i++) {
    x -= weights[i];
    if (x < 0) return i;
  }
  return weights.length - 1;
}

/** A typo in a Latin word of five letters or more: two letters swapped, or one dropped. */
function typo(r: Rand, text: string, rate: number): string {
  return text.replace(/\p{L}{5,}/gu, (w) => {
    if (r() >= rate) return w;
    const i = 1 + Math.floor(r() * (w.length - 2));
    return r() < 0.5 ? w.slice(0, i) + w[i + 1] + w[i] + w.slice(i + 2) : w.slice(0, i) + w.slice(i + 1);
  });
}

function fill(template: string, product: Product, lang: HarnessLang): string {
  return template.replaceAll('{objs}', product.objs[lang]).replaceAll('{product}', product.name);
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** One comment about a topic, in a language, with the extras real comments carry. */
function comment(r: Rand, topic: string, lang: HarnessLang, product: Product, fillerShare: number): { text: string; filler: boolean } {
  const vocab = TOPICS.find((t) => t.id === topic);
  if (!vocab) throw new Error(`no topic ${topic}`);
  const zh = lang === 'zh';
  const parts: string[] = [];
  if (r() < 0.25) parts.push(pick(r, GREETINGS[lang]));
  let body = fill(pick(r, vocab.phrasings[lang]), product, lang);
  if (r() < 0.2) body = `${fill(pick(r, PRAISE[lang]), product, lang)}${zh ? '' : ' '}${body}`;
  // the product by name or by its words in most rows
  const m = r();
  if (m < 0.4) body = `${body}${zh ? '，' : ' '}${fill(pick(r, PRODUCT_MENTIONS[lang]), product, lang)}`;
  else if (m < 0.7) body = zh ? `${pick(r, product.words.zh)}里${body}` : `${body} (${pick(r, product.words[lang])})`;
  if (!zh) body = typo(r, body, 0.04);
  parts.push(zh ? `${body}。` : `${capitalise(body)}.`);
  const filler = r() < fillerShare;
  if (filler) parts.push(zh ? `${pick(r, FILLER.zh)}。` : `${capitalise(pick(r, FILLER[lang]))}.`);
  if (r() < 0.15) parts.push(pick(r, SIGN_OFFS[lang]));
  return { text: parts.join(zh ? '' : ' '), filler };
}

/** A near-duplicate: the same words said again with different case, punctuation or spacing. */
function nearDuplicate(r: Rand, text: string): string {
  const k = Math.floor(r() * 3);
  if (k === 0) return `${text}!!`;
  if (k === 1) return text.toLowerCase();
  return `${text} `.replace(/[.。]\s*$/u, '').trim();
}

function csvCell(s: string): string {
  return /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

const DAY = 86_400_000;
const QUARTER_START = Date.UTC(2026, 3, 1);

interface Draft {
  topic: string;
  lang: HarnessLang;
  platform: string;
  plan: string;
}

/** Topic sizes for `total` rows: a long tail (rank^-s), every topic at least 4 rows. */
function longTail(r: Rand, k: number, total: number): number[] {
  const s = between(r, 0.5, 1.1);
  const w = Array.from({ length: k }, (_, i) => (i + 1) ** -s * between(r, 0.85, 1.15));
  const sum = w.reduce((a, b) => a + b, 0);
  return w.map((x) => Math.max(4, Math.round((x / sum) * total)));
}

export function generateExport(seed: number, mix: LanguageMix): GeneratedExport {
  const r = seededRandom(seed * 7919 + LANGUAGE_MIXES.indexOf(mix) + 1);
  const product = pick(r, PRODUCTS);
  const [main, second] = mix.split('+') as [HarnessLang, HarnessLang | undefined];
  const secondShare = second ? between(r, 0.1, 0.4) : 0;
  const fillerShare = between(r, 0.1, 0.4);
  const k = 5 + Math.floor(r() * 5);
  const topics = [...TOPICS]
    .map((t) => ({ id: t.id, key: r() }))
    .sort((a, b) => a.key - b.key)
    .slice(0, k)
    .map((t) => t.id);
  const platformMix = topics.map(() => leaning(r, PLATFORMS.length));
  const planMix = topics.map(() => leaning(r, PLANS.length));
  const total = 250 + Math.floor(r() * 350);
  const segmentKind = r();
  const segment = segmentKind < 0.6 ? { column: 'platform', value: pick(r, PLATFORMS) } : segmentKind < 0.8 ? { column: 'plan', value: pick(r, PLANS) } : null;
  const goal = segment
    ? segment.column === 'platform'
      ? `What do our ${segment.value} users complain about most?`
      : `What are the biggest problems for customers on the ${segment.value} plan?`
    : 'What are the most important problems to fix?';

  // Draw rows until the analysed rows' largest topic leads the second by 15%: the headline is
  // then a fact of the data, not of how a tie is broken.
  let drafts: Draft[] = [];
  let largest = '';
  for (let attempt = 0; ; attempt++) {
    const sizes = longTail(r, k, total);
    drafts = [];
    topics.forEach((topic, t) => {
      for (let i = 0; i < sizes[t]; i++) {
        drafts.push({
          topic,
          lang: second && r() < secondShare ? second : main,
          platform: PLATFORMS[drawIndex(r, platformMix[t])],
          plan: PLANS[drawIndex(r, planMix[t])],
        });
      }
    });
    const counts = new Map<string, number>();
    for (const d of drafts)
      if (!segment || (segment.column === 'platform' ? d.platform : d.plan) === segment.value) counts.set(d.topic, (counts.get(d.topic) ?? 0) + 1);
    const ranked = [...counts].sort((a, b) => b[1] - a[1]);
    largest = ranked[0][0];
    if (ranked.length < 2 || ranked[0][1] >= 1.15 * ranked[1][1] || attempt >= 50) break;
  }
  // file order is no clue: shuffle
  for (let i = drafts.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [drafts[i], drafts[j]] = [drafts[j], drafts[i]];
  }
  const growing = pick(r, topics);
  const lines = ['id,date,platform,plan,rating,comment'];
  const rows: TruthRow[] = [];
  const written: Array<{ text: string; topic: string }> = [];
  drafts.forEach((d, i) => {
    const id = `FB-${String(i + 1).padStart(5, '0')}`;
    let text: string;
    let filler = false;
    let duplicate = false;
    const same = written.filter((w) => w.topic === d.topic);
    if (same.length > 0 && r() < 0.06) {
      text = nearDuplicate(r, pick(r, same).text);
      duplicate = true;
    } else {
      ({ text, filler } = comment(r, d.topic, d.lang, product, fillerShare));
      written.push({ text, topic: d.topic });
    }
    // the growing topic's rows lean to the quarter's end
    const u = r();
    const day = Math.floor((d.topic === growing ? Math.sqrt(u) : u) * 90);
    const date = new Date(QUARTER_START + day * DAY).toISOString().slice(0, 10);
    const rating = 1 + Math.floor(r() * (text.includes('love') || text.includes('encanta') || text.includes('喜欢') ? 4 : 3));
    lines.push([id, date, d.platform, d.plan, String(rating), csvCell(text)].join(','));
    rows.push({ id, topic: d.topic, lang: d.lang, duplicate, filler });
  });
  return { seed, mix, product, goal, segment, csv: `${lines.join('\n')}\n`, rows, topics, growing, largest };
}
