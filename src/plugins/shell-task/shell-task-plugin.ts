/** The `shell_task` builtin plugin: run one shell command and report how it went. */
import { isAbsolute, resolve } from 'node:path';
import type { ArtifactContract, Agent, StopValidator } from '../../runtime/agent.js';
import { defaultProcessRegistry } from '../../tools/default-process-registry.js';
import { createExecTool } from '../../tools/exec-tool.js';
import type { ProcessRegistry } from '../../tools/process-registry.js';
import { createProcessTool } from '../../tools/process-tool.js';
import { createWriteMarkdownArtifactTool } from '../shared/write-markdown-artifact-tool.js';
import { shellTaskInputSchema, type ShellTaskInput } from './input-schema.js';
import { shellTaskOfflineProcedure } from './shell-task-offline-procedure.js';
import { SHELL_TASK_REPORT, SHELL_TASK_REPORT_HEADINGS } from './shell-task-report.js';

export interface ShellTaskPluginOptions {
  /** Default: the process-wide registry (the one the server gives the RunService for notices). */
  registry?: ProcessRegistry;
  /** Extra variables for the command, over the minimal base environment. */
  env?: Record<string, string>;
}

export const SHELL_TASK_ARTIFACTS: ArtifactContract[] = [
  {
    path: SHELL_TASK_REPORT,
    type: 'markdown',
    audience: 'user',
    sensitivity: 'internal',
    description: 'What was run, its exit code, how long it took and the end of its output',
    required: true,
    requiredHeadings: SHELL_TASK_REPORT_HEADINGS,
  },
];

const reportNamesCommand: StopValidator<ShellTaskInput> = {
  name: 'report_names_command',
  async validate(ctx) {
    let text: string;
    try {
      text = await ctx.workspace.readText(`artifacts/${SHELL_TASK_REPORT}`);
    } catch {
      return []; // a missing report is the artifact contract's finding
    }
    return text.includes(ctx.input.command)
      ? []
      : [{ check: 'report_names_command', path: SHELL_TASK_REPORT, message: `${SHELL_TASK_REPORT} does not show the command that was run` }];
  },
};

export function createShellTaskPlugin(opts: ShellTaskPluginOptions = {}): Agent<ShellTaskInput> {
  return {
    name: 'shell_task',
    version: '1.0.0',
    description: 'Run one shell command (in the background when it is long), follow it to the end and write report.md.',
    inputSchema: shellTaskInputSchema,
    fileInputs: [],
    defaultSkill: 'shell_task',
    defaultGoal: 'Run the command and report its exit code, duration and output.',
    promptFragments: [
      'Run the command from the run input with `exec` exactly as given, in its `workdir` if one is given.',
      'If exec answers that the command is still running, follow it with `process` poll (waitMs up to 30000) until it exits; do not start it twice.',
      'Once it has exited, read the end of its output (`process` log) and write artifacts/report.md with the headings Command, Exit code, Duration and Output (the output tail in a code block).',
      'Report failures as they are: a non-zero exit code is a result to report, not a reason to retry.',
    ],
    createTools(ctx) {
      const registry = opts.registry ?? defaultProcessRegistry();
      const root = ctx.workspace.root;
      // The workdir comes from whoever created the run, not from the model: it widens the roots.
      const roots = [root, ...(ctx.input.workdir ? [isAbsolute(ctx.input.workdir) ? ctx.input.workdir : resolve(root, ctx.input.workdir)] : [])];
      return [
        createExecTool({ registry, scopeKey: ctx.runId, cwd: root, allowedRoots: roots, env: opts.env }),
        createProcessTool({ registry, scopeKey: ctx.runId }),
        createWriteMarkdownArtifactTool({ workspace: ctx.workspace, contracts: SHELL_TASK_ARTIFACTS, onlyPaths: [SHELL_TASK_REPORT] }),
      ];
    },
    plan: [
      // A failing command is still a finished task: the step is done once its outcome is reported.
      { id: 'run', title: 'Run the command and follow it to the end', tools: ['exec', 'process'], doneWhenArtifactsExist: [SHELL_TASK_REPORT] },
      { id: 'report', title: 'Write report.md', tools: ['write_markdown_artifact'], doneWhenArtifactsExist: [SHELL_TASK_REPORT] },
    ],
    artifacts: SHELL_TASK_ARTIFACTS,
    validators: [reportNamesCommand],
    offlineProcedure: shellTaskOfflineProcedure,
  };
}
