/** Structured failure/notice carried by steps and errors instead of prose in `result`. */
export type DiagnosisSeverity = 'info' | 'warning' | 'error';

export interface DiagnosisInit {
  code: string;
  severity: DiagnosisSeverity;
  summary: string;
  detail?: string;
  hint?: string;
  retryable?: boolean;
}

export interface DiagnosisDict {
  code: string;
  severity: DiagnosisSeverity;
  summary: string;
  detail: string;
  hint: string;
  retryable: boolean;
}

const SEVERITIES: readonly DiagnosisSeverity[] = ['info', 'warning', 'error'];
const ICONS: Record<DiagnosisSeverity, string> = { info: 'ℹ️', warning: '⚠️', error: '❌' };

export class Diagnosis {
  readonly code: string;
  readonly severity: DiagnosisSeverity;
  readonly summary: string;
  readonly detail: string;
  readonly hint: string;
  readonly retryable: boolean;

  constructor(init: DiagnosisInit) {
    if (!SEVERITIES.includes(init.severity)) {
      throw new TypeError(`Diagnosis.severity must be one of ${SEVERITIES.join('|')}, got ${JSON.stringify(init.severity)}`);
    }
    this.code = String(init.code ?? '');
    this.severity = init.severity;
    this.summary = String(init.summary ?? '');
    this.detail = init.detail ?? '';
    this.hint = init.hint ?? '';
    this.retryable = init.retryable ?? false;
  }

  toDict(): DiagnosisDict {
    return {
      code: this.code,
      severity: this.severity,
      summary: this.summary,
      detail: this.detail,
      hint: this.hint,
      retryable: this.retryable,
    };
  }

  /** Lenient inverse of toDict: unknown severities degrade to 'error' so a bad peer never hides a failure. */
  static fromDict(d: unknown): Diagnosis {
    const o = (d && typeof d === 'object' ? d : {}) as Record<string, unknown>;
    const sev = SEVERITIES.includes(o.severity as DiagnosisSeverity) ? (o.severity as DiagnosisSeverity) : 'error';
    return new Diagnosis({
      code: typeof o.code === 'string' ? o.code : 'unknown',
      severity: sev,
      summary: typeof o.summary === 'string' ? o.summary : '',
      detail: typeof o.detail === 'string' ? o.detail : '',
      hint: typeof o.hint === 'string' ? o.hint : '',
      retryable: o.retryable === true,
    });
  }

  /** Plain-text form for channels without structure (IM bots). */
  toText(): string {
    const parts = [`${ICONS[this.severity]} ${this.summary}`.trim()];
    if (this.detail) parts.push(this.detail);
    if (this.hint) parts.push(`Hint: ${this.hint}`);
    return parts.join('\n');
  }
}

export function toDiagnosis(d: Diagnosis | DiagnosisInit): Diagnosis {
  return d instanceof Diagnosis ? d : new Diagnosis(d);
}
