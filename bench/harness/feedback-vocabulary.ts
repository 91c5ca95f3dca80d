/**
 * What the harness's exports are written from: products (name and the words for what users keep in
 * them), complaint topics with several phrasings each sharing the topic's own words in English, Spanish and Chinese (negations
 * included), praise clauses, filler phrases, greetings and sign-offs. `{objs}` is the product's word
 * for its items. Nothing here is read by the analysis; the scores use it to tell filler, greetings
 * and product words from topic words.
 */

export type HarnessLang = 'en' | 'es' | 'zh';

export interface Product {
  name: string;
  objs: Record<HarnessLang, string>;
  /** other words the product's users use for it in every topic */
  words: Record<HarnessLang, string[]>;
}

export const PRODUCTS: Product[] = [
  {
    name: 'NoteNest',
    objs: { en: 'notes', es: 'notas', zh: '笔记' },
    words: { en: ['notebook', 'app'], es: ['cuaderno', 'aplicación'], zh: ['笔记本', '应用'] },
  },
  {
    name: 'TaskFlow',
    objs: { en: 'tasks', es: 'tareas', zh: '任务' },
    words: { en: ['projects', 'app'], es: ['proyectos', 'aplicación'], zh: ['项目', '软件'] },
  },
  { name: 'PhotoPop', objs: { en: 'photos', es: 'fotos', zh: '照片' }, words: { en: ['albums', 'app'], es: ['álbumes', 'aplicación'], zh: ['相册', '应用'] } },
  {
    name: 'FitTrack',
    objs: { en: 'workouts', es: 'entrenamientos', zh: '训练记录' },
    words: { en: ['routines', 'app'], es: ['rutinas', 'aplicación'], zh: ['健身', '软件'] },
  },
  {
    name: 'Tunely',
    objs: { en: 'playlists', es: 'listas', zh: '歌单' },
    words: { en: ['songs', 'app'], es: ['canciones', 'aplicación'], zh: ['歌曲', '应用'] },
  },
  {
    name: 'BudgetBee',
    objs: { en: 'expenses', es: 'gastos', zh: '账单' },
    words: { en: ['budgets', 'app'], es: ['presupuestos', 'aplicación'], zh: ['预算', '软件'] },
  },
];

export interface TopicVocabulary {
  id: string;
  phrasings: Record<HarnessLang, string[]>;
}

export const TOPICS: TopicVocabulary[] = [
  {
    id: 'sync',
    phrasings: {
      en: [
        'sync keeps failing between my phone and my laptop',
        'my {objs} do not sync anymore since the update',
        'syncing creates duplicate copies of my {objs}',
        'changes I make offline never sync to my other devices',
        'I get a sync conflict every time I edit on two devices',
        'sync is stuck and my {objs} are out of date on the tablet',
      ],
      es: [
        'la sincronización falla entre mi móvil y mi portátil',
        'mis {objs} ya no se sincronizan desde la actualización',
        'al sincronizar se duplican mis {objs}',
        'los cambios sin conexión nunca se sincronizan con los otros dispositivos',
        'cada vez que edito en dos dispositivos hay un conflicto de sincronización',
      ],
      zh: [
        '同步经常失败，手机和电脑上的{objs}不一致',
        '更新以后{objs}不再同步了',
        '同步以后出现重复的{objs}',
        '离线修改的内容一直没有同步到其他设备',
        '在两台设备上编辑总是同步冲突',
      ],
    },
  },
  {
    id: 'export',
    phrasings: {
      en: [
        'the app crashes when I export to PDF',
        'exporting {objs} to PDF freezes and then closes',
        'PDF export crashed again and I lost the file',
        'export to PDF does not work, it just quits',
        'every time I try to export a PDF it crashes',
      ],
      es: [
        'la aplicación se cierra al exportar a PDF',
        'exportar mis {objs} a PDF se congela y se cierra',
        'al exportar a PDF vuelve a fallar y pierdo el archivo',
        'no puedo exportar a PDF, se cierra sola',
      ],
      zh: ['导出PDF的时候闪退', '把{objs}导出成PDF会卡住然后崩溃', '导出PDF又崩溃了，文件也丢了', '一导出PDF就闪退，根本用不了'],
    },
  },
  {
    id: 'price',
    phrasings: {
      en: [
        'way too expensive for what it does, the price is too high',
        'the subscription price went up again',
        'I cannot justify paying this price every month, too expensive',
        'the price is not fair for students',
        'the yearly plan is too expensive compared to other apps',
      ],
      es: [
        'demasiado caro para lo que ofrece, el precio es muy alto',
        'la suscripción subió de precio otra vez',
        'el precio no es justo para estudiantes',
        'el plan anual es demasiado caro',
      ],
      zh: ['太贵了，不值这个价格', '订阅又涨价了，价格太高', '学生用价格太高了', '年费太贵了，价格不合理'],
    },
  },
  {
    id: 'login',
    phrasings: {
      en: [
        'I cannot log in with my Google account, login fails',
        'login fails with a wrong password error although the password is right',
        'it keeps logging me out, I have to log in every day',
        'the two-factor login code never arrives',
        'sign in is broken, stuck on the login screen',
        'I cannot sign in, login keeps failing',
      ],
      es: [
        'no puedo iniciar sesión con mi cuenta de Google',
        'al iniciar sesión dice contraseña incorrecta pero es correcta',
        'me cierra la sesión todos los días',
        'nunca llega el código para iniciar sesión',
      ],
      zh: ['用谷歌账号登录不了', '登录时提示密码错误，可是密码是对的', '每天都要重新登录', '登录验证码一直收不到'],
    },
  },
  {
    id: 'slow',
    phrasings: {
      en: [
        'the app is really slow to open',
        'scrolling is slow and laggy once I have many {objs}',
        'it takes forever to load, so slow',
        'everything is slow and laggy after the last update',
        'loading is so slow I give up waiting',
      ],
      es: [
        'la aplicación es muy lenta al abrir',
        'con muchas {objs} todo va lento',
        'tarda una eternidad en cargar, muy lenta',
        'todo va lento después de la última actualización',
      ],
      zh: ['打开特别慢，很卡顿', '{objs}一多就卡顿', '加载太慢了，卡顿严重', '更新以后整体都变慢，卡顿'],
    },
  },
  {
    id: 'notify',
    phrasings: {
      en: [
        'reminder notifications arrive late or not at all',
        'I never get the notification for my reminders',
        'push notifications stopped working',
        'the reminder notification goes off at the wrong time',
      ],
      es: [
        'las notificaciones de recordatorio llegan tarde o no llegan',
        'nunca recibo la notificación de mis recordatorios',
        'las notificaciones dejaron de funcionar',
        'la notificación del recordatorio suena a la hora equivocada',
      ],
      zh: ['提醒通知总是延迟或者根本不来', '从来收不到提醒通知', '推送通知失效了', '提醒通知的时间总是不对'],
    },
  },
  {
    id: 'search',
    phrasings: {
      en: [
        'search does not find {objs} I know exist',
        'the search results are wrong or empty',
        'searching by keyword returns nothing useful',
        'search ignores words inside my {objs}',
      ],
      es: [
        'la búsqueda no encuentra {objs} que sé que existen',
        'los resultados de búsqueda salen vacíos o equivocados',
        'la búsqueda por palabra clave no devuelve nada útil',
      ],
      zh: ['搜索找不到明明存在的{objs}', '搜索结果是空的或者不对', '按关键词搜索什么都搜不到'],
    },
  },
  {
    id: 'battery',
    phrasings: {
      en: [
        'it drains my battery in a few hours',
        'my phone gets hot and the battery dies fast',
        'huge battery drain even in the background',
        'battery usage is crazy high',
      ],
      es: ['me agota la batería en pocas horas', 'el teléfono se calienta y la batería se acaba rápido', 'consume muchísima batería incluso en segundo plano'],
      zh: ['特别耗电，几个小时电池就没了', '手机发烫，耗电特别快', '后台也一直耗电'],
    },
  },
  {
    id: 'support',
    phrasings: {
      en: [
        'support never answered my ticket',
        'I waited two weeks for a reply from customer support',
        'customer support closed my request without helping',
        'no response from the support team at all',
      ],
      es: ['el soporte nunca respondió mi ticket', 'esperé dos semanas una respuesta del soporte', 'el soporte cerró mi solicitud sin ayudarme'],
      zh: ['客服一直不回复我的工单', '等了两个星期客服才回复', '客服没解决问题就把工单关了'],
    },
  },
  {
    id: 'ads',
    phrasings: {
      en: ['there are too many ads', 'video ads pop up every minute', 'ads banners cover the buttons', 'full screen ads are so annoying'],
      es: ['hay demasiados anuncios', 'aparecen anuncios de video cada minuto', 'los anuncios tapan los botones'],
      zh: ['广告太多了', '每分钟都弹出视频广告', '广告横幅挡住了按钮'],
    },
  },
  {
    id: 'design',
    phrasings: {
      en: [
        'the new design is confusing, the buttons moved',
        'the new design makes dark mode text unreadable',
        'the new design hides the settings menu',
        'the font in the new design is too small to read',
      ],
      es: [
        'el nuevo diseño es confuso, los botones cambiaron de sitio',
        'con el nuevo diseño el texto no se lee en modo oscuro',
        'el nuevo diseño esconde los ajustes',
      ],
      zh: ['新界面很乱，按钮位置都变了', '新界面深色模式下文字看不清', '新界面把设置藏起来了'],
    },
  },
];

/** Praise said before a complaint: true of every topic, so no topic's word. */
export const PRAISE: Record<HarnessLang, string[]> = {
  en: ['I love {product}, but', 'Great app overall, however', 'Really like the {objs} features, but', 'Been a happy user for years but'],
  es: ['Me encanta {product}, pero', 'En general es una gran aplicación, sin embargo', 'Soy usuario feliz desde hace años pero'],
  zh: ['很喜欢{product}，但是', '整体挺好用的，不过', '用了好几年了一直很满意，但是'],
};

/** Filler appended whatever the topic. */
export const FILLER: Record<HarnessLang, string[]> = {
  en: ['please fix this ASAP', 'this really affects my work', 'please fix it soon, it affects my work'],
  es: ['por favor arréglenlo pronto', 'esto afecta mucho mi trabajo'],
  zh: ['希望尽快改进', '很影响工作', '请尽快修复，很影响工作'],
};

export const GREETINGS: Record<HarnessLang, string[]> = {
  en: ['Hi team,', 'Hello,', 'Hey there,', 'Dear support,'],
  es: ['Hola equipo,', 'Hola,', 'Buenas,'],
  zh: ['你好，', '您好，', '开发者你好，'],
};

export const SIGN_OFFS: Record<HarnessLang, string[]> = {
  en: ['Thanks!', 'Cheers', 'Best regards', 'Thank you'],
  es: ['Gracias', 'Saludos', 'Un saludo'],
  zh: ['谢谢', '辛苦了', '谢谢你们'],
};

/** Mentions of the product by name. */
export const PRODUCT_MENTIONS: Record<HarnessLang, string[]> = {
  en: ['in {product}', 'with {product}', 'on {product}'],
  es: ['en {product}', 'con {product}'],
  zh: ['在{product}里', '用{product}的时候'],
};
