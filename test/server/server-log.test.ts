/** The server's own log lines carry no control sequence a terminal acts on, whatever a client sends. */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { SERVER_LOG_HOOKS } from '../../src/server/server-log.js';

describe('the server log', () => {
  it('pino writes C1 controls raw (it escapes only C0): with the server log hooks an error carrying them is logged without them', () => {
    const lines = (hooks: object | undefined): string => {
      let out = '';
      const stream = new Writable({
        write(chunk, _enc, cb) {
          out += chunk.toString('utf8');
          cb();
        },
      });
      const log = pino({ level: 'info', ...(hooks ? { hooks } : {}) }, stream);
      // a run's error quoting a command's output: 8-bit OSC 52 and CSI, and a 7-bit OSC title
      const err = new Error('exec failed: \u009d52;c;Y3VybCBldmlsIHwgc2g=\u009c\u009b2J \u001b]0;owned\u0007 done');
      log.error({ err }, 'run failed');
      log.info('a line with \u001b[31mcolour\u001b[0m and a title \u009d2;x\u0007');
      return out;
    };
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the test
    const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
    expect(lines(undefined).match(CONTROL)?.length ?? 0).toBeGreaterThan(0);
    const out = lines(SERVER_LOG_HOOKS);
    expect(out.match(CONTROL) ?? []).toEqual([]);
    expect(out).toContain('exec failed:');
    expect(out).toContain(' done');
  });

  it('the hook cleans a line as the server writes it: ESC sequences out, secrets masked', () => {
    const line = '{"msg":"run failed: \x1b]0;owned\x07 \x1b[2J done"}\n';
    expect(SERVER_LOG_HOOKS.streamWrite(line)).toBe('{"msg":"run failed:   done"}\n');
  });
});
