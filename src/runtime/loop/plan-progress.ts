/**
 * PlanProgress: keeps runtime/todo_state.json in step with the plan — a step goes
 * in_progress before one of its tools runs and completed once its success conditions hold.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { PlanStep } from '../agent.js';
import type { PostToolUseHook, PreToolUseHook } from '../run-hooks.js';
import type { PublishFn } from '../run-publisher.js';
import { LatestWrite } from '../storage/latest-write.js';

export type TodoStatus = 'pending' | 'in_progress' | 'completed' | 'failed';
export interface TodoItem {
  id: string;
  title: string;
  status: TodoStatus;
  tools: string[];
}

export interface TodoState {
  run_id: string;
  updated_at: string;
  current_step: string | null;
  todos: TodoItem[];
  succeeded_tools: string[];
}

export class PlanProgress {
  private readonly todos: TodoItem[];
  private readonly succeeded = new Set<string>();
  /** todo_state.json: written in order, the newest snapshot wins */
  private readonly writes: LatestWrite<TodoState>;

  constructor(
    private readonly runId: string,
    private readonly plan: PlanStep[],
    private readonly artifactsDir: string,
    persist: (state: TodoState) => Promise<void>,
    private readonly publish: PublishFn,
  ) {
    this.writes = new LatestWrite(persist);
    this.todos = plan.map((s) => ({ id: s.id, title: s.title, status: 'pending' as TodoStatus, tools: [...s.tools] }));
  }

  state(): TodoState {
    const cur = this.todos.find((t) => t.status === 'in_progress') ?? null;
    return {
      run_id: this.runId,
      updated_at: new Date().toISOString(),
      current_step: cur?.id ?? null,
      todos: this.todos.map((t) => ({ ...t, tools: [...t.tools] })),
      succeeded_tools: [...this.succeeded].sort(),
    };
  }

  private isDone(step: PlanStep): boolean {
    const tools = step.doneWhenToolsSucceeded ?? [];
    const files = step.doneWhenArtifactsExist ?? [];
    if (tools.length === 0 && files.length === 0) return step.tools.some((t) => this.succeeded.has(t));
    return tools.every((t) => this.succeeded.has(t)) && files.every((f) => existsSync(join(this.artifactsDir, f)));
  }

  /** Re-evaluates every step; returns true when anything changed. */
  private refresh(): boolean {
    let changed = false;
    this.plan.forEach((step, i) => {
      const todo = this.todos[i];
      if (todo.status !== 'completed' && this.isDone(step)) {
        todo.status = 'completed';
        changed = true;
      }
    });
    return changed;
  }

  private async emit(): Promise<void> {
    const state = this.state();
    this.publish('run', { type: 'plan.updated', todos: state.todos.map(({ id, title, status }) => ({ id, title, status })) });
    await this.writes.write(state).catch(() => undefined);
  }

  /** A resumed run's todos and succeeded tools, as its checkpoint kept them. */
  restore(s: TodoState): void {
    for (const t of this.todos) {
      const was = s.todos.find((x) => x.id === t.id);
      if (was) t.status = was.status;
    }
    for (const n of s.succeeded_tools) this.succeeded.add(n);
  }

  async init(): Promise<void> {
    await this.writes.write(this.state());
  }

  /** A promise only when a todo changed (then its snapshot is written): most calls change nothing. */
  beforeTool(name: string): Promise<void> | void {
    const idx = this.todos.findIndex((t) => t.status !== 'completed' && t.tools.includes(name));
    if (idx < 0) return;
    let changed = false;
    this.todos.forEach((t, i) => {
      if (i !== idx && t.status === 'in_progress') {
        t.status = 'pending';
        changed = true;
      }
    });
    if (this.todos[idx].status !== 'in_progress') {
      this.todos[idx].status = 'in_progress';
      changed = true;
    }
    if (changed) return this.emit();
  }

  afterTool(name: string, ok: boolean): Promise<void> | void {
    if (ok) this.succeeded.add(name);
    if (this.refresh()) return this.emit();
  }

  /** Final plan check: steps whose conditions do not hold become failed; returns their reasons. */
  async finalCheck(): Promise<string[]> {
    this.refresh();
    const reasons: string[] = [];
    this.plan.forEach((step, i) => {
      const todo = this.todos[i];
      if (todo.status === 'completed') return;
      todo.status = 'failed';
      const missingTools = (step.doneWhenToolsSucceeded ?? []).filter((t) => !this.succeeded.has(t));
      const missingFiles = (step.doneWhenArtifactsExist ?? []).filter((f) => !existsSync(join(this.artifactsDir, f)));
      const why = [
        missingTools.length ? `tools never succeeded: ${missingTools.join(', ')}` : '',
        missingFiles.length ? `artifacts missing: ${missingFiles.join(', ')}` : '',
      ].filter(Boolean);
      reasons.push(`plan step "${step.id}" (${step.title}) not done${why.length ? `: ${why.join('; ')}` : ''}`);
    });
    await this.emit();
    return reasons;
  }

  hooks(): { pre: PreToolUseHook; post: PostToolUseHook } {
    return {
      pre: { name: 'PlanProgress', beforeTool: (c) => this.beforeTool(c.name) },
      post: { name: 'PlanProgress', afterTool: (c, r) => this.afterTool(c.name, r.ok) },
    };
  }
}
