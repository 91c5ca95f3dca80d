/** Run ids in URLs: a conservative charset so no id can name a path outside the runs folder. */
export function isRunId(id: unknown): id is string {
  return typeof id === 'string' && /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(id) && !id.includes('..');
}
