/** An SVG parsed back with an XML parser: its title, description, texts and the bars it draws. */
import { XMLParser, XMLValidator } from 'fast-xml-parser';

export interface SvgMarks {
  title: string;
  desc: string;
  root: Record<string, string>;
  texts: string[];
  /** filled rectangles ECharts drew as chart marks (bars, cells), in drawing order */
  marks: Array<{ series: number; index: number; fill: string }>;
}

type Node = Record<string, unknown>;

export function parseSvg(svg: string): SvgMarks {
  const valid = XMLValidator.validate(svg);
  if (valid !== true) throw new Error(`not well-formed XML: ${JSON.stringify(valid.err)}`);
  const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', preserveOrder: true, trimValues: false, htmlEntities: true }).parse(
    svg,
  ) as Node[];
  const out: SvgMarks = { title: '', desc: '', root: {}, texts: [], marks: [] };
  const textOf = (children: Node[]): string =>
    children.map((c) => (typeof c['#text'] === 'string' || typeof c['#text'] === 'number' ? String(c['#text']) : '')).join('');
  const walk = (nodes: Node[], depth: number): void => {
    for (const n of nodes) {
      const attrs = (n[':@'] ?? {}) as Record<string, string>;
      for (const [tag, value] of Object.entries(n)) {
        if (tag === ':@' || tag === '#text') continue;
        const children = (value ?? []) as Node[];
        if (tag === 'svg' && depth === 0) out.root = attrs;
        if (tag === 'title' && depth === 1) out.title = textOf(children);
        if (tag === 'desc' && depth === 1) out.desc = textOf(children);
        if (tag === 'text') out.texts.push(textOf(children));
        if (tag === 'path' && attrs.ecmeta_ssr_type === 'chart' && attrs.ecmeta_series_index !== undefined)
          out.marks.push({ series: Number(attrs.ecmeta_series_index), index: Number(attrs.ecmeta_data_index), fill: attrs.fill ?? '' });
        walk(children, depth + 1);
      }
    }
  };
  walk(doc, 0);
  return out;
}
