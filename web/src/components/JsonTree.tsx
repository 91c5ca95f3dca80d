import { useState } from 'react';

/** A collapsible JSON viewer: objects and arrays fold, the first two levels start open. */
export function JsonTree({ value, name, depth = 0 }: { value: unknown; name?: string; depth?: number }) {
  const [open, setOpen] = useState(depth < 2);
  const label = name !== undefined ? <span className="jkey">{name}: </span> : null;
  if (value === null || typeof value !== 'object') {
    const cls = value === null ? 'jnull' : typeof value === 'string' ? 'jstr' : typeof value === 'number' ? 'jnum' : 'jbool';
    return (
      <div className="jrow">
        {label}
        <span className={cls}>{typeof value === 'string' ? JSON.stringify(value) : String(value)}</span>
      </div>
    );
  }
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value as Record<string, unknown>);
  const brackets = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  return (
    <div className="jrow">
      <button className="jtoggle" onClick={() => setOpen(!open)} aria-expanded={open}>
        {open ? '▾' : '▸'}
      </button>
      {label}
      <span className="jmeta">
        {brackets[0]}
        {!open && ` ${entries.length} ${Array.isArray(value) ? 'items' : 'keys'} `}
        {!open && brackets[1]}
      </span>
      {open && (
        <div className="jchildren">
          {entries.map(([k, v]) => (
            <JsonTree key={k} name={k} value={v} depth={depth + 1} />
          ))}
          <span className="jmeta">{brackets[1]}</span>
        </div>
      )}
    </div>
  );
}
