/**
 * The one table of header names a feedback CSV may use, per field and language. Headers are
 * compared after `normaliseHeader` (NFKC, lower case, Latin accents dropped, runs of anything but
 * letters and digits as one `_`), so "Valoración", "valoracion" and "VALORACIÓN" are one alias.
 * Order matters within a field: when a file has two matching columns, the earlier alias wins.
 */

export type HeaderField = 'id' | 'text' | 'rating' | 'channel' | 'date';
export type AliasLanguage = 'en' | 'zh' | 'ja' | 'es' | 'fr' | 'de' | 'pt';

export const HEADER_ALIASES: Record<HeaderField, Record<AliasLanguage, string[]>> = {
  id: {
    en: ['feedback_id', 'id', 'feedbackid', 'review_id', 'response_id', 'ticket_id', 'comment_id', 'uid'],
    zh: ['编号', '反馈编号', '反馈id', '序号', '工单号', '评论id', '评价id', '用户反馈编号', '編號', '回饋編號', '序號'],
    ja: ['番号', 'フィードバックid', 'レビューid', '回答id', '問い合わせ番号', '管理番号', '通し番号', 'no'],
    es: ['id_comentario', 'id_opinion', 'id_resena', 'identificador', 'numero', 'no_de_comentario'],
    fr: ['identifiant', 'id_avis', 'id_commentaire', 'numero_avis'],
    de: ['nummer', 'nr', 'kennung', 'feedback_nr', 'bewertungs_id'],
    pt: ['id_comentario', 'codigo', 'id_avaliacao', 'numero'],
  },
  text: {
    en: [
      'text',
      'feedback',
      'feedback_text',
      'comment',
      'comments',
      'content',
      'review',
      'review_text',
      'message',
      'body',
      'response',
      'verbatim',
      'description',
    ],
    zh: [
      '反馈内容',
      '反馈',
      '用户反馈',
      '内容',
      '评论',
      '评论内容',
      '评价内容',
      '评价',
      '意见',
      '意见反馈',
      '留言',
      '问题描述',
      '描述',
      '正文',
      '文本',
      '回饋內容',
      '回饋',
      '內容',
      '評論',
      '意見',
    ],
    ja: ['内容', 'フィードバック', 'コメント', 'レビュー', 'レビュー本文', '本文', '意見', 'ご意見', '感想', '回答', '問い合わせ内容', '自由記述', 'テキスト'],
    es: ['comentario', 'comentarios', 'texto', 'opinion', 'opiniones', 'resena', 'mensaje', 'contenido', 'descripcion', 'respuesta', 'retroalimentacion'],
    fr: ['commentaire', 'commentaires', 'texte', 'avis', 'contenu', 'retour', 'remarque', 'remarques'],
    de: ['kommentar', 'kommentare', 'rueckmeldung', 'ruckmeldung', 'bewertungstext', 'nachricht', 'inhalt', 'beschreibung', 'anmerkung', 'meinung'],
    pt: ['comentário', 'comentários', 'texto', 'opinião', 'mensagem', 'conteúdo', 'descrição', 'resposta'],
  },
  rating: {
    en: ['rating', 'score', 'stars', 'star_rating', 'csat', 'nps', 'nps_score'],
    zh: ['评分', '打分', '星级', '评星', '分数', '得分', '评级', '满意度', '評分', '星級'],
    ja: ['評価', '星評価', '点数', 'スコア', '星', '満足度', 'レーティング'],
    es: ['puntuacion', 'calificacion', 'valoracion', 'estrellas', 'puntaje', 'nota'],
    fr: ['note', 'evaluation', 'etoiles', 'satisfaction'],
    de: ['bewertung', 'sterne', 'punkte', 'punktzahl'],
    pt: ['nota', 'avaliacao', 'classificacao', 'estrelas', 'pontuacao'],
  },
  channel: {
    en: ['channel', 'source', 'platform', 'origin'],
    zh: ['平台', '渠道', '来源', '渠道来源', '终端', '客户端', '來源', '通路'],
    ja: ['プラットフォーム', 'チャネル', 'チャンネル', '媒体', '経路', '流入元', 'ソース', '端末'],
    es: ['plataforma', 'canal', 'fuente', 'origen'],
    fr: ['canal', 'plateforme', 'origine'],
    de: ['kanal', 'plattform', 'quelle', 'herkunft'],
    pt: ['plataforma', 'canal', 'fonte', 'origem'],
  },
  date: {
    en: ['date', 'created_at', 'created', 'submitted_at', 'timestamp', 'time', 'submitted'],
    zh: ['日期', '时间', '提交时间', '创建时间', '反馈时间', '提交日期', '時間'],
    ja: ['日付', '日時', '投稿日', '作成日', '登録日', '受付日'],
    es: ['fecha', 'fecha_de_creacion', 'creado'],
    fr: ['date_de_creation', 'cree_le'],
    de: ['datum', 'erstellt_am', 'zeitpunkt', 'zeit'],
    pt: ['data', 'criado_em', 'data_de_criacao'],
  },
};

/** A header as the table compares it. */
export function normaliseHeader(h: string): string {
  return (
    h
      .replace(/^\uFEFF/, '')
      .normalize('NFKD')
      // Latin/Greek/Cyrillic diacritics only: kana voicing marks (U+3099/U+309A) are part of the word
      .replace(/[\u0300-\u036f]/g, '')
      .normalize('NFKC')
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, '_')
      .replace(/^_|_$/g, '')
  );
}

/** What headers and aliases are compared by: separators do not count ("Created At" = "created_at"). */
export function headerKey(h: string): string {
  return normaliseHeader(h).replace(/_/g, '');
}

const flat = (field: HeaderField): string[] => {
  const seen = new Set<string>();
  // English first (the historical order), then the other languages
  for (const lang of Object.keys(HEADER_ALIASES[field]) as AliasLanguage[]) {
    for (const a of HEADER_ALIASES[field][lang]) seen.add(headerKey(a));
  }
  return [...seen];
};

/** Alias keys (`headerKey` form) per field, in precedence order. */
export const ID_ALIASES = flat('id');
export const TEXT_ALIASES = flat('text');
export const RATING_ALIASES = flat('rating');
export const CHANNEL_ALIASES = flat('channel');
export const DATE_ALIASES = flat('date');

/** A few text-column names per language, for diagnoses that say how to name the column. */
export function textAliasExamples(): string {
  const t = HEADER_ALIASES.text;
  return [...t.en.slice(0, 4), t.zh[0], t.ja[2], t.es[0], t.fr[0], t.de[0], t.pt[0]].map((a) => `"${a}"`).join(', ');
}
