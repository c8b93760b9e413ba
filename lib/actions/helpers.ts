import type { Action, ActionErrorKind, ActionTarget } from './types.ts';

const PLACEHOLDER = /%([A-Za-z_][\w.-]*)%/g;

/** Names of the `%name%` placeholders used in a string. */
export function placeholders(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1]!);
}

/**
 * Puts variable values in place of `%name%` at the last moment, right before the browser gets
 * them. Unknown names stay as written so a typo is visible instead of silently empty.
 */
export function substitute(args: readonly string[], variables: Record<string, string> | undefined): string[] {
  if (!variables) return [...args];
  return args.map((a) =>
    a.replace(PLACEHOLDER, (whole, name: string) =>
      Object.hasOwn(variables, name) ? variables[name]! : whole,
    ),
  );
}

export function describeTarget(action: Pick<Action, 'target' | 'description'> & { method?: string }): string {
  const t: ActionTarget | undefined = action.target;
  if (!t) return 'the page';
  if ('id' in t) return `element [${t.id}]`;
  if ('locator' in t) {
    const l = t.locator;
    if (typeof l === 'string') return l;
    return l.name ? `${l.role} "${l.name}"` : l.xpath;
  }
  return `point (${t.xPct}%, ${t.yPct}%)`;
}

/** Maps a Playwright / browser error to the kind a caller can act on. */
export function classifyError(err: Error): { kind: ActionErrorKind; message: string } {
  // Playwright colours its call log for terminals; a JSON answer must not carry the escapes.
  const text = stripAnsi(err.message ?? String(err));
  const first = text.split('\n')[0] ?? text;
  if (/ERR_BLOCKED_BY_CLIENT|blocked by the network guard/i.test(text))
    return { kind: 'blocked', message: first };
  if (/not attached|detached|no longer|Target closed|not connected|Node is detached/i.test(text))
    return { kind: 'not_found', message: first };
  if (
    /not visible|not enabled|disabled|intercepts pointer events|not stable|outside of the viewport|not editable|readonly|not a checkbox|did not change its state|not an <input>|cannot be filled/i.test(
      text,
    )
  )
    return { kind: 'not_actionable', message: explainActionability(text) };
  if (/net::ERR_|NS_ERROR|Navigation failed|navigating|frame was detached/i.test(text))
    return { kind: 'navigation', message: first };
  if (err.name === 'TimeoutError' || /Timeout \d+ms exceeded/i.test(text))
    return { kind: 'timeout', message: first };
  return { kind: 'not_actionable', message: first };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC is exactly what is removed.
const ANSI = /\u001b\[[0-9;]*m/g;
const stripAnsi = (s: string) => s.replace(ANSI, '');

/** Playwright's call log says *why* an element was not actionable; keep that line, drop the noise. */
function explainActionability(text: string): string {
  const lines = text.split('\n').map((l) => l.trim());
  const reason = lines.find((l) =>
    /not visible|not enabled|disabled|intercepts pointer|not stable|not editable/i.test(l),
  );
  return (reason ?? lines[0] ?? text).replace(/^-\s*/, '');
}
