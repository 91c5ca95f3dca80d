/**
 * Extractive summary of a text or Markdown document: sentences scored by the frequency of their
 * content words (normalised by length), with a bonus for opening a section and for sharing words
 * with headings; near-duplicates are skipped. Every sentence returned is copied from the source.
 */
import { contentTokens } from '../../shared/tokenize.js';

export interface SummarySentence {
  text: string;
  /** index of the section (heading) it belongs to; -1 before the first heading */
  section: number;
  order: number;
  score: number;
}

export interface ExtractiveSummary {
  title: string | null;
  headings: string[];
  summary: string[];
  keyPoints: string[];
  keywords: string[];
  sentenceCount: number;
  wordCount: number;
}

interface Block {
  text: string;
  section: number;
  heading: boolean;
}

/** Markdown → plain blocks: code fences, tables, HTML and link targets removed; headings kept apart. */
export function markdownBlocks(source: string): Block[] {
  const blocks: Block[] = [];
  let section = -1;
  let fenced = false;
  let para: string[] = [];
  const flush = (): void => {
    if (para.length) blocks.push({ text: para.join(' '), section, heading: false });
    para = [];
  };
  for (const raw of source.replace(/\r\n?/g, '\n').split('\n')) {
    if (/^\s*(```|~~~)/.test(raw)) {
      fenced = !fenced;
      flush();
      continue;
    }
    if (fenced) continue;
    const h = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw);
    if (h) {
      flush();
      section++;
      blocks.push({ text: clean(h[1]), section, heading: true });
      continue;
    }
    const line = raw.trim();
    if (line === '' || /^\|/.test(line) || /^(-{3,}|\*{3,}|_{3,})$/.test(line) || /^<[^>]+>$/.test(line)) {
      flush();
      continue;
    }
    const item = /^([-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (item) {
      // each list item stands alone
      flush();
      blocks.push({ text: clean(item[2]), section, heading: false });
      continue;
    }
    para.push(clean(line.replace(/^>\s?/, '')));
  }
  flush();
  return blocks.filter((b) => b.text.length > 0);
}

function clean(s: string): string {
  return s
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/(\*\*|__)(.*?)\1/g, '$2')
    .replace(/(^|\W)[*_]([^*_]+)[*_](?=\W|$)/g, '$1$2')
    .replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

export function splitSentences(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  // a boundary is end punctuation followed by whitespace or the end, so "8.1" and "p90." inside stay whole
  for (const m of text.matchAll(/[.!?]+["')\]]*(?=\s|$)/g)) {
    const end = (m.index ?? 0) + m[0].length;
    const candidate = text.slice(start, end).trim();
    if (/\b(e\.g|i\.e|etc|vs|mr|mrs|dr|approx|no)\.$/i.test(candidate)) continue;
    if (candidate) out.push(candidate);
    start = end;
  }
  const rest = text.slice(start).trim();
  if (rest) out.push(rest);
  return out;
}

const jaccard = (a: Set<string>, b: Set<string>): number => {
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / Math.max(1, a.size + b.size - inter);
};

export function summarise(source: string, opts: { maxSentences?: number; maxKeyPoints?: number } = {}): ExtractiveSummary {
  const blocks = markdownBlocks(source);
  const headings = blocks.filter((b) => b.heading).map((b) => b.text);
  const title = blocks[0]?.heading ? blocks[0].text : null;
  const sentences: Array<SummarySentence & { stems: Set<string> }> = [];
  const freq = new Map<string, number>();
  const surface = new Map<string, string>();
  let wordCount = 0;
  for (const b of blocks) {
    if (b.heading) continue;
    for (const s of splitSentences(b.text)) {
      const toks = contentTokens(s);
      wordCount += s.split(/\s+/).length;
      for (const t of toks) {
        freq.set(t.stem, (freq.get(t.stem) ?? 0) + 1);
        if (!surface.has(t.stem)) surface.set(t.stem, t.word);
      }
      sentences.push({ text: s, section: b.section, order: sentences.length, score: 0, stems: new Set(toks.map((t) => t.stem)) });
    }
  }
  const headingStems = new Set(headings.flatMap((h) => contentTokens(h).map((t) => t.stem)));
  const maxFreq = Math.max(1, ...freq.values());
  const firstInSection = new Set<number>();
  const seenSection = new Set<number>();
  for (const s of sentences) {
    if (!seenSection.has(s.section)) {
      seenSection.add(s.section);
      firstInSection.add(s.order);
    }
  }
  for (const s of sentences) {
    const words = s.text.split(/\s+/).length;
    if (s.stems.size === 0) continue;
    let sum = 0;
    for (const st of s.stems) sum += (freq.get(st) ?? 0) / maxFreq + (headingStems.has(st) ? 0.3 : 0);
    let score = sum / Math.sqrt(s.stems.size);
    if (firstInSection.has(s.order)) score *= 1.25;
    if (words < 5) score *= 0.5;
    if (words > 60) score *= 0.7;
    s.score = score;
  }
  const n = sentences.length;
  const k = Math.min(opts.maxSentences ?? Math.max(1, Math.min(7, Math.round(Math.sqrt(n)))), n);
  const ranked = [...sentences].sort((a, b) => b.score - a.score || a.order - b.order);
  const chosen: typeof sentences = [];
  for (const s of ranked) {
    if (chosen.length >= k) break;
    if (chosen.some((c) => jaccard(c.stems, s.stems) > 0.5)) continue;
    chosen.push(s);
  }
  const summaryOrder = new Set(chosen.map((c) => c.order));
  chosen.sort((a, b) => a.order - b.order);

  // Key points: the best remaining sentence of each section, or the next best overall.
  const maxPoints = opts.maxKeyPoints ?? 6;
  const keyPoints: string[] = [];
  const sections = [...new Set(sentences.map((s) => s.section))];
  if (sections.length > 1) {
    for (const sec of sections) {
      const best = ranked.find((s) => s.section === sec && !summaryOrder.has(s.order) && s.score > 0);
      // the document title is not a section name
      const label = sec >= 0 && !(sec === 0 && title !== null) ? headings[sec] : null;
      if (best) keyPoints.push(label ? `${label}: ${best.text}` : best.text);
      else if (label) {
        const inSummary = ranked.find((s) => s.section === sec);
        if (inSummary) keyPoints.push(`${label}: ${inSummary.text}`);
      }
      if (keyPoints.length >= maxPoints) break;
    }
  }
  for (const s of ranked) {
    if (keyPoints.length >= Math.min(maxPoints, 3)) break;
    if (!summaryOrder.has(s.order) && !keyPoints.some((p) => p.endsWith(s.text))) keyPoints.push(s.text);
  }
  if (keyPoints.length === 0) keyPoints.push(...chosen.map((c) => c.text).slice(0, maxPoints));

  const keywords = [...freq.entries()]
    .filter(([, c]) => c >= 2 || freq.size < 10)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, 8)
    .map(([st]) => surface.get(st) ?? st);

  return { title, headings, summary: chosen.map((c) => c.text), keyPoints, keywords, sentenceCount: n, wordCount };
}
