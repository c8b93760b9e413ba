/**
 * A Playwright script read with the TypeScript compiler API (never regexes): its steps are the
 * statements of the block that holds the script's page work (a `test(...)` body, `main()`, a
 * `try` block or the file itself), each with its character span and lines, so the step named by
 * an error's line can be found and replaced in place. Browser set-up and tear-down (launching,
 * `newPage`, `close`) are marked as harness: the repair runs the steps on its own page.
 */
import type * as TS from 'typescript';

export type Ts = typeof TS;

export interface ScriptStep {
  /** 0-based position among the steps. */
  index: number;
  /** Character span of the statement (leading comments excluded). */
  start: number;
  end: number;
  /** 1-based first and last line. */
  line: number;
  endLine: number;
  /** The statement's source text. */
  text: string;
  /** Whitespace before the statement on its first line (kept for a replacement). */
  indent: string;
  /** Set-up or tear-down of the browser itself, not a step of the journey. */
  harness: boolean;
  /** An assertion: the statement calls `expect(…)`. */
  assertion: boolean;
  node: TS.Statement;
}

export interface ParsedScript {
  source: string;
  steps: ScriptStep[];
  /** Whether the file calls `expect` anywhere (the repaired steps may then use it). */
  usesExpect: boolean;
}

export class ScriptError extends Error {
  override name = 'ScriptError';
}

let loaded: Ts | undefined;
/** The compiler is loaded on first use (only repair needs it). */
export async function loadTs(): Promise<Ts> {
  if (loaded) return loaded;
  try {
    const m = (await import('typescript')) as Ts & { default?: Ts };
    loaded = m.default ?? m;
    return loaded;
  } catch {
    // A set-up problem of this install, not the caller's script (an API answers 500, not 400).
    throw new Error('repair needs the typescript package (npm install typescript)');
  }
}

function walk(ts: Ts, node: TS.Node, visit: (n: TS.Node) => boolean | undefined): void {
  if (visit(node) === false) return;
  ts.forEachChild(node, (child) => walk(ts, child, visit));
}

/** Does the subtree contain a node for which `test` holds? */
function contains(ts: Ts, node: TS.Node, test: (n: TS.Node) => boolean): boolean {
  let found = false;
  walk(ts, node, (n) => {
    if (found) return false;
    if (test(n)) found = true;
    return !found;
  });
  return found;
}

const calleeName = (ts: Ts, call: TS.CallExpression): string | undefined =>
  ts.isIdentifier(call.expression)
    ? call.expression.text
    : ts.isPropertyAccessExpression(call.expression)
      ? call.expression.name.text
      : undefined;

function isAssertion(ts: Ts, s: TS.Statement): boolean {
  return contains(ts, s, (n) => ts.isCallExpression(n) && calleeName(ts, n) === 'expect');
}

const HARNESS_CALLS = new Set([
  'setDefaultTimeout',
  'setDefaultNavigationTimeout',
  'setViewportSize',
  'launch',
  'launchPersistentContext',
  'connect',
  'connectOverCDP',
  'newPage',
  'newContext',
  'close',
]);

function isHarness(ts: Ts, s: TS.Statement): boolean {
  return contains(ts, s, (n) => {
    if (!ts.isCallExpression(n) || !ts.isPropertyAccessExpression(n.expression)) return false;
    const name = n.expression.name.text;
    const on = n.expression.expression;
    const onName = ts.isIdentifier(on) ? on.text : '';
    return HARNESS_CALLS.has(name) && (name !== 'close' || /browser|context/i.test(onName));
  });
}

const pageWork = (ts: Ts, s: TS.Statement) =>
  contains(ts, s, (n) => ts.isAwaitExpression(n)) &&
  contains(ts, s, (n) => ts.isIdentifier(n) && (n.text === 'page' || n.text === 'expect'));

/** `await test.step('…', async () => { … })`: its body's statements are steps of the list around it. */
function stepBody(ts: Ts, s: TS.Statement): TS.NodeArray<TS.Statement> | undefined {
  if (!ts.isExpressionStatement(s)) return undefined;
  const e = ts.isAwaitExpression(s.expression) ? s.expression.expression : s.expression;
  if (
    !ts.isCallExpression(e) ||
    !ts.isPropertyAccessExpression(e.expression) ||
    e.expression.name.text !== 'step'
  )
    return undefined;
  const fn = e.arguments[1];
  return fn && (ts.isArrowFunction(fn) || ts.isFunctionExpression(fn)) && ts.isBlock(fn.body)
    ? fn.body.statements
    : undefined;
}

const flatten = (ts: Ts, list: readonly TS.Statement[]): TS.Statement[] =>
  list.flatMap((s) => {
    const body = stepBody(ts, s);
    return body ? flatten(ts, body) : [s];
  });

/** The statement lists of the file: the file itself and every block but `test.step` bodies. */
function statementLists(ts: Ts, file: TS.SourceFile): TS.NodeArray<TS.Statement>[] {
  const lists: TS.NodeArray<TS.Statement>[] = [file.statements];
  const inner = new Set<TS.NodeArray<TS.Statement>>();
  walk(ts, file, (n) => {
    if (ts.isBlock(n)) lists.push(n.statements);
    const body = ts.isExpressionStatement(n) ? stepBody(ts, n) : undefined;
    if (body) inner.add(body);
    return true;
  });
  return lists.filter((l) => !inner.has(l));
}

/** The syntax tree; a syntax error names the file and line. */
export function sourceFile(ts: Ts, source: string, fileName: string): TS.SourceFile {
  const kind = /\.(c|m)?js$/i.test(fileName) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, kind);
  const problems = (file as unknown as { parseDiagnostics?: TS.Diagnostic[] }).parseDiagnostics ?? [];
  if (problems.length) {
    const d = problems[0]!;
    const at = d.start !== undefined ? file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    throw new ScriptError(`${fileName}:${at}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
  }
  return file;
}

/**
 * Parses the script and picks the block of steps: the one holding `line` (when given) as a direct
 * statement with page work, else the one with the most statements that await page work. The
 * bodies of `test.step(…)` calls are part of the block around them (their statements are steps).
 */
export function parseScript(ts: Ts, source: string, fileName = 'script.ts', line?: number): ParsedScript {
  const file = sourceFile(ts, source, fileName);
  const lineOf = (pos: number) => file.getLineAndCharacterOfPosition(pos).line + 1;
  const work = (list: readonly TS.Statement[]) =>
    flatten(ts, list).filter((s) => pageWork(ts, s) && !isHarness(ts, s));
  let best: TS.NodeArray<TS.Statement> | undefined;
  for (const list of statementLists(ts, file)) {
    if (line !== undefined) {
      const holds = work(list).some((s) => lineOf(s.getStart(file)) <= line && line <= lineOf(s.getEnd()));
      // The innermost list wins: blocks are visited outside-in.
      if (holds) best = list;
      continue;
    }
    if (work(list).length > (best ? work(best).length : 0)) best = list;
  }
  if (!best)
    throw new ScriptError(
      line !== undefined
        ? `${fileName}: line ${line} is not a step of the script (no awaited page call there)`
        : `${fileName}: no steps found (no statement awaits a page call)`,
    );
  const steps = flatten(ts, best).map((node, index): ScriptStep => {
    const start = node.getStart(file);
    const lineStart = source.lastIndexOf('\n', start - 1) + 1;
    return {
      index,
      start,
      end: node.getEnd(),
      line: lineOf(start),
      endLine: lineOf(node.getEnd()),
      text: source.slice(start, node.getEnd()),
      indent: /^[ \t]*/.exec(source.slice(lineStart, start))?.[0] ?? '',
      harness: isHarness(ts, node),
      assertion: isAssertion(ts, node),
      node,
    };
  });
  return {
    source,
    steps,
    usesExpect: contains(ts, file, (n) => ts.isCallExpression(n) && calleeName(ts, n) === 'expect'),
  };
}

/** The step whose lines hold `line`. */
export function stepAtLine(script: ParsedScript, line: number): ScriptStep | undefined {
  return script.steps.find((s) => !s.harness && s.line <= line && line <= s.endLine);
}

/**
 * The literal values an assertion compares with (`toHaveText('Total: 10')` → `Total: 10`), in
 * order: what a repair may not change silently. Pure over the AST.
 */
export function expectedValues(ts: Ts, node: TS.Node): string[] {
  const out: string[] = [];
  walk(ts, node, (n) => {
    if (!ts.isCallExpression(n) || !ts.isPropertyAccessExpression(n.expression)) return true;
    const matcher = n.expression.name.text;
    if (!/^to[A-Z]/.test(matcher)) return true;
    for (const a of n.arguments) {
      if (ts.isStringLiteral(a) || ts.isNoSubstitutionTemplateLiteral(a)) out.push(a.text);
      else if (ts.isNumericLiteral(a)) out.push(String(Number(a.text)));
      else if (ts.isRegularExpressionLiteral(a)) out.push(a.text);
      else if (ts.isPrefixUnaryExpression(a) && ts.isNumericLiteral(a.operand))
        out.push(String(-Number(a.operand.text)));
    }
    return true;
  });
  return out;
}

/** A step as one line for a prompt or a report. Pure. */
export const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

/**
 * The script with each edit applied (`text` replaces the statement; `null` deletes it with its
 * line). Edits must not overlap. Pure.
 */
export function applyEdits(
  source: string,
  edits: readonly { step: ScriptStep; text: string | null }[],
): string {
  let out = source;
  for (const { step, text } of [...edits].sort((a, b) => b.step.start - a.step.start)) {
    if (text === null) {
      // Remove the whole line(s) when the statement stands alone on them.
      const lineStart = out.lastIndexOf('\n', step.start - 1) + 1;
      const nl = out.indexOf('\n', step.end);
      const lineEnd = nl < 0 ? out.length : nl + 1;
      const alone =
        out.slice(lineStart, step.start).trim() === '' && out.slice(step.end, lineEnd).trim() === '';
      out = alone
        ? out.slice(0, lineStart) + out.slice(lineEnd)
        : out.slice(0, step.start) + out.slice(step.end);
    } else {
      const body = text
        .split('\n')
        .map((l, i) => (i === 0 ? l : `${step.indent}${l}`))
        .join('\n');
      out = out.slice(0, step.start) + body + out.slice(step.end);
    }
  }
  return out;
}

/** A short review diff of one step: the old lines with `-`, the new with `+`. Pure. */
export function stepDiff(step: ScriptStep, text: string | null): string {
  const old = step.text.split('\n').map((l, i) => `- ${step.line + i}: ${l.trim()}`);
  const neu = text === null ? ['+ (deleted)'] : text.split('\n').map((l) => `+ ${l.trim()}`);
  return [...old, ...neu].join('\n');
}
