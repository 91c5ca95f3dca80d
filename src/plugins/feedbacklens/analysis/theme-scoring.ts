/** How a theme is named and ranked: severity and priority bands, and a title from its key terms. */
import { isPraiseWord } from './sentiment-score.js';

export type Severity = 'low' | 'medium' | 'high' | 'critical';
export type Priority = 'P0' | 'P1' | 'P2' | 'P3';
export type ThemeSentiment = 'positive' | 'neutral' | 'negative' | 'mixed';

export function severityOf(score: number): Severity {
  if (score >= 0.65) return 'critical';
  if (score >= 0.45) return 'high';
  if (score >= 0.25) return 'medium';
  return 'low';
}

export function priorityOf(score: number): Priority {
  if (score >= 0.45) return 'P0';
  if (score >= 0.25) return 'P1';
  if (score >= 0.1) return 'P2';
  return 'P3';
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/**
 * Characters that end or start a Chinese phrase only inside a larger one: particles, adverbs of
 * degree, measure words. A label that begins or ends with one ("台设备", "版太贵了", "设计得很") cut
 * a word off; it names no theme.
 */
const CJK_EDGE = new Set([...'了的得地很太也都就又在和与及个台次把被给让着过吗呢吧啊呀嘛么些这那每各该版费']);
/** Small words of English that no product phrase starts or ends with ("price per", "per seat" is fine). */
const EDGE_WORDS = new Set(['per', 'via', 'vs', 'etc', 'also', 'just', 'really', 'very', 'still', 'even', 'again']);

/** Whether a key term's label reads as a whole phrase: no cut-off Chinese word, no dangling small word. */
export function isWholeLabel(label: string): boolean {
  const l = label.trim();
  if (!l) return false;
  if (/\p{Script=Han}/u.test(l)) {
    const chars = [...l.replace(/\s+/g, '')];
    if (CJK_EDGE.has(chars[0]) || CJK_EDGE.has(chars[chars.length - 1])) return false;
  }
  const words = l.toLowerCase().split(/\s+/);
  return !(words.length > 1 && (EDGE_WORDS.has(words[0]) || EDGE_WORDS.has(words[words.length - 1])));
}

/**
 * A theme's title from its key terms (most distinctive first; `keys` their stems): a two-word term
 * among the leading three that is the leading term or grows it ("Calendar sync", "同步失败") reads
 * as a product phrase, else the leading term alone. Never a pair of unrelated words ("Load & list"), never a label that
 * cuts a word, and praise words name no subject when a topic word exists.
 */
export function themeTitle(labels: string[], lang = 'en', keys: string[] = labels): string {
  const all = labels.map((l, i) => ({ label: l, key: keys[i] ?? l })).filter((t) => isWholeLabel(t.label));
  const praiseOnly = (t: { label: string; key: string }) => (t.key.includes(' ') ? t.label.split(' ') : [t.label]).every((w) => isPraiseWord(w, lang));
  const topical = all.filter((t) => !praiseOnly(t));
  const use = topical.length > 0 ? topical : all;
  if (use.length === 0) return 'General feedback';
  // a two-word term that is the leading term or grows it ("calendar" → "calendar sync")
  const lead = use[0].key.split(' ');
  const phrase = use.slice(0, 3).find((t, i) => t.key.includes(' ') && (i === 0 || t.key.split(' ').some((w) => lead.includes(w))));
  return capitalise((phrase ?? use[0]).label);
}
