/** A problem with a definition file (agent, skill, plugin, config): one line `file: field: message`. */
export interface DefinitionProblem {
  /** As the user knows it: relative to the project (`.runtrail/agents/x.md`) or `~/.runtrail/…`. */
  file: string;
  field?: string;
  message: string;
  level: 'error' | 'warning';
}

export function problemLine(p: DefinitionProblem): string {
  return `${p.file}: ${p.field ? `${p.field}: ` : ''}${p.message}`;
}

export function errorsOf(problems: readonly DefinitionProblem[]): DefinitionProblem[] {
  return problems.filter((p) => p.level === 'error');
}
