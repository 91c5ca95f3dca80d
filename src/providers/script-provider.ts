/**
 * `--model script:<file.json>`: replays a JSON array of turns as a streamed model, one turn per
 * `stream()` call, for tests, demos and reproducing bugs.
 */
import { readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import type { DiagnosisInit } from '../events/diagnosis.js';
import type { ModelProvider, ModelRequest, ModelStreamPart } from './model-provider.js';
import { parseModelTurns, type ModelTurn } from './model-turn.js';
import { fitRequest } from './context-fit.js';
import { extractiveSummary } from './extractive-summary.js';
import { estimateRequestTokens, streamTurn } from './turn-stream.js';

export type LoadScriptResult = { ok: true; turns: ModelTurn[]; file: string | null } | { ok: false; diagnosis: DiagnosisInit };

/** Reads and validates a script (a file path resolved against `cwd`, or the turns themselves). */
export function loadScriptTurns(fileOrTurns: string | readonly unknown[], opts: { cwd?: string } = {}): LoadScriptResult {
  let raw: unknown = fileOrTurns;
  let file: string | null = null;
  if (typeof fileOrTurns === 'string') {
    file = resolve(opts.cwd ?? process.cwd(), fileOrTurns);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'read error';
      return fail(`Cannot read script file ${fileOrTurns} (${code})`, `resolved to ${file}`);
    }
    try {
      raw = JSON.parse(text);
    } catch (err) {
      // Node's message quotes the start of the file; a server must not echo someone's file back.
      const at = /at position \d+/.exec((err as Error).message)?.[0];
      return fail(`Script file ${fileOrTurns} is not valid JSON`, at ? `syntax error ${at}` : 'syntax error');
    }
  }
  const parsed = parseModelTurns(raw);
  if (!parsed.ok) {
    const where = file ? `Script file ${typeof fileOrTurns === 'string' ? fileOrTurns : ''}` : 'Script';
    return fail(`${where} is invalid: ${parsed.errors[0]}`, parsed.errors.join('\n'));
  }
  return { ok: true, turns: parsed.turns, file };
}

function fail(summary: string, detail: string): LoadScriptResult {
  return {
    ok: false,
    diagnosis: {
      code: 'invalid_request',
      severity: 'error',
      summary,
      detail,
      hint: 'A script is a JSON array of turns { "text"?, "reasoning"?, "toolCalls"?: [{ "name", "args" }], "delayMs"?, "error"? }.',
      retryable: false,
    },
  };
}

async function* refused(diagnosis: DiagnosisInit): AsyncGenerator<ModelStreamPart> {
  yield { type: 'error', diagnosis };
}

export class ScriptProvider implements ModelProvider {
  readonly provider = 'script';
  readonly model: string;
  /** Absolute path of the script file, or null for inline turns. */
  readonly file: string | null;
  private readonly turns: readonly ModelTurn[];
  private next = 0;
  private callIds = 0;

  constructor(turns: readonly ModelTurn[], file: string | null) {
    this.turns = turns;
    this.file = file;
    this.model = file ? basename(file) : 'inline';
  }

  /** The next turn to play and the call ids used: a resumed run replays the turn that was in flight. */
  position(): { next: number; callIds: number } {
    return { next: this.next, callIds: this.callIds };
  }

  restorePosition(p: unknown): void {
    const at = p as { next?: unknown; callIds?: unknown } | null;
    if (typeof at?.next === 'number') this.next = at.next;
    if (typeof at?.callIds === 'number') this.callIds = at.callIds;
  }

  get turnsLeft(): number {
    return this.turns.length - this.next;
  }

  stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    // a local model has no window of its own; limits.context_tokens still applies, and a request
    // refused before it is "sent" does not use up a turn
    // a compaction summary is not one of the script's turns: it is extracted, and the script goes on where it was
    if (request.summaryOf) {
      const delayMs = this.turns[this.next]?.summaryDelayMs;
      return this.play({ text: extractiveSummary(request.summaryOf), ...(delayMs ? { delayMs } : {}) }, -1, request);
    }
    const fit = fitRequest(request, { label: `script:${this.model}`, info: null });
    if (!fit.ok) return refused(fit.diagnosis);
    // The turn is taken when stream() is called, so overlapping calls never replay one turn twice.
    const index = this.next;
    const turn = this.turns[index];
    if (turn) this.next++;
    return this.play(turn, index, request, fit.estimatedInputTokens);
  }

  /** `inputTokens`: the request's estimate, when the context check already weighed it. */
  private async *play(turn: ModelTurn | undefined, index: number, request: ModelRequest, inputTokens?: number): AsyncGenerator<ModelStreamPart> {
    const label = `script:${this.model}`;
    if (!turn) {
      yield {
        type: 'error',
        diagnosis: {
          code: 'script_exhausted',
          severity: 'error',
          summary: `${label} has no turn ${index}: all ${this.turns.length} turns were used`,
          hint: 'Add turns to the script, ending with a final answer (a turn with text and no toolCalls).',
          retryable: false,
        },
      };
      return;
    }
    yield* streamTurn(turn, {
      signal: request.signal,
      label,
      inputTokens: inputTokens ?? estimateRequestTokens(request),
      nextToolCallId: () => `call_script_${index}_${this.callIds++}`,
      failureDetail: `turn ${index} of ${label} fails on purpose`,
    });
  }
}

/** Throws a TypeError naming the turn and field when the script is invalid; use loadScriptTurns for data. */
export function createScriptProvider(fileOrTurns: string | readonly unknown[], opts: { cwd?: string } = {}): ScriptProvider {
  const loaded = loadScriptTurns(fileOrTurns, opts);
  if (!loaded.ok) throw new TypeError(`${loaded.diagnosis.summary}\n${loaded.diagnosis.detail ?? ''}`.trim());
  return new ScriptProvider(loaded.turns, loaded.file);
}
