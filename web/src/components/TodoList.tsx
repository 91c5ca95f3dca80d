export interface Todo {
  id: string;
  title: string;
  status: string;
}

const MARK: Record<string, string> = { completed: '☑', in_progress: '◐', failed: '☒', pending: '☐' };

/** todo_state.json as the runtime writes it: an array, or an object holding one under todos/steps/items. */
export function todosOf(v: unknown): Todo[] {
  const arr = Array.isArray(v)
    ? v
    : v && typeof v === 'object'
      ? ((v as Record<string, unknown>).todos ?? (v as Record<string, unknown>).steps ?? (v as Record<string, unknown>).items)
      : null;
  if (!Array.isArray(arr)) return [];
  return arr
    .filter((t): t is Record<string, unknown> => Boolean(t) && typeof t === 'object')
    .map((t, i) => ({ id: String(t.id ?? i), title: String(t.title ?? t.name ?? t.id ?? `step ${i + 1}`), status: String(t.status ?? 'pending') }));
}

export function TodoList({ todos }: { todos: Todo[] }) {
  if (!todos.length) return <p className="muted">No plan yet.</p>;
  return (
    <ul className="todos">
      {todos.map((t) => (
        <li key={t.id} className={`todo todo-${t.status}`}>
          <span className="icon" role="img" aria-label={t.status}>
            {MARK[t.status] ?? '☐'}
          </span>{' '}
          {t.title}
        </li>
      ))}
    </ul>
  );
}
