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

/** `keys` are the labels' stems ("calendar sync", "价格 太贵"): a two-word key is a title of its own. */
export function themeTitle(labels: string[], lang = 'en', keys: string[] = labels): string {
  // name the theme by its subject: skip labels made only of praise words when others exist
  const topical = labels.map((l, i) => [l, keys[i] ?? l] as const).filter(([l, k]) => !(k.includes(' ') ? l.split(' ') : [l]).every((w) => isPraiseWord(w, lang)));
  const use = topical.length > 0 ? topical : labels.map((l, i) => [l, keys[i] ?? l] as const);
  if (use.length === 0) return 'General feedback';
  if (use[0][1].includes(' ') || use.length === 1) return capitalise(use[0][0]);
  return capitalise(`${use[0][0]} & ${use[1][0]}`);
}
