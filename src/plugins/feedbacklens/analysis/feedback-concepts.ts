/**
 * A small bilingual vocabulary of app feedback: the words English, Spanish and Chinese users use
 * for the same complaint ("sync" / "sincronizar" / "同步", "expensive" / "caro" / "太贵"). A row
 * carrying one also carries the concept's term (`~sync`), so the rows of one topic written in two
 * languages share a term and can meet in one theme; within one language it joins synonyms
 * ("price" and "expensive"). A concept term names no theme: labels come from the rows' own words.
 */

interface Concept {
  id: string;
  /** lower-cased word beginnings in Latin-script languages */
  latin: RegExp;
  /** Chinese words containing one of these */
  han: string[];
}

const CONCEPTS: Concept[] = [
  { id: 'sync', latin: /^(sync|sincroni|synchron|synchroni)/, han: ['同步'] },
  { id: 'export', latin: /^(export)/, han: ['导出'] },
  { id: 'import', latin: /^(import)/, han: ['导入'] },
  { id: 'crash', latin: /^(crash|freez|congela|bloque|crashe)/, han: ['闪退', '崩溃', '卡死'] },
  {
    id: 'price',
    latin: /^(price|pricing|expensive|overpriced|cost|caro|cara|precio|costos|cuesta|subscri|suscrip)/,
    han: ['价格', '太贵', '涨价', '贵', '收费', '订阅', '年费'],
  },
  { id: 'refund', latin: /^(refund|reembolso|devoluci)/, han: ['退款'] },
  { id: 'login', latin: /^(login|log|sign|signin|sesi[oó]n|contrase|password)/, han: ['登录', '登陆', '密码'] },
  { id: 'slow', latin: /^(slow|lag|sluggish|lent|lenta|lento|carg)/, han: ['慢', '卡顿', '卡'] },
  { id: 'notify', latin: /^(notif|remind|alert|recordatorio|aviso)/, han: ['通知', '提醒', '推送'] },
  { id: 'search', latin: /^(search|b[uú]squeda|buscar|busca)/, han: ['搜索', '搜不到', '查找'] },
  { id: 'battery', latin: /^(batter|bater[ií]a|drain)/, han: ['耗电', '电池', '电量'] },
  { id: 'support', latin: /^(support|soporte|ticket|atenci[oó]n)/, han: ['客服', '工单'] },
  { id: 'ads', latin: /^(ads?$|advert|anuncio|publicidad)/, han: ['广告'] },
  { id: 'design', latin: /^(design|redesign|dise[nñ]o|layout|interfa)/, han: ['界面', '设计', '改版'] },
  { id: 'dark', latin: /^(dark|oscur)/, han: ['深色', '暗黑', '夜间'] },
  { id: 'upload', latin: /^(upload|subir|carga)/, han: ['上传'] },
  { id: 'offline', latin: /^(offline|sin conexi)/, han: ['离线'] },
  { id: 'data-loss', latin: /^(lost|lose|losing|perd|pierd)/, han: ['丢失', '丢了'] },
];

const NONE: readonly string[] = [];
/** word → its concept terms: words repeat across rows, and each is matched against every concept once */
const memo = new Map<string, readonly string[]>();
const MEMO_MAX = 100_000;

function conceptsOfWord(w: string): readonly string[] {
  let hit = memo.get(w);
  if (hit === undefined) {
    const han = /\p{Script=Han}/u.test(w);
    const found = CONCEPTS.filter((c) => (han ? c.han.some((h) => w.includes(h)) : c.latin.test(w))).map((c) => `~${c.id}`);
    hit = found.length > 0 ? found : NONE;
    if (memo.size >= MEMO_MAX) memo.clear();
    memo.set(w, hit);
  }
  return hit;
}

/** The concept terms of a row's words, each once, in the order first met. */
export function conceptTerms(words: readonly string[]): string[] {
  const out: string[] = [];
  for (const w of words) for (const c of conceptsOfWord(w)) if (!out.includes(c)) out.push(c);
  return out;
}

/** Whether a term is a concept term (it names no theme). */
export function isConceptTerm(term: string): boolean {
  return term.startsWith('~');
}
