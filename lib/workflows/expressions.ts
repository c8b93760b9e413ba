/**
 * JSONata, the data language of `transform`, `route.when`, `iterate.over` and `context.set`: an
 * interpreter (no eval), bounded here in input size and time so a workflow cannot hang its runner.
 */
import jsonata from 'jsonata';
import type { Json, JsonObject } from '../store/ports.ts';

export class ExpressionError extends Error {
  override name = 'ExpressionError';
  constructor(
    readonly expression: string,
    message: string,
  ) {
    super(message);
  }
}

/** Evaluations stop after this long (JSONata checks the clock between steps). */
export const EXPRESSION_TIMEOUT_MS = 2000;
/** Deepest call recursion an expression may reach. */
export const EXPRESSION_MAX_DEPTH = 200;
/** Largest scope (as JSON) an expression may read: bigger data belongs in storage, not a workflow. */
export const EXPRESSION_MAX_INPUT_BYTES = 5_000_000;

const compiled = new Map<string, ReturnType<typeof jsonata>>();

/** Parses once; the error names where the expression is wrong. */
export function parseExpression(expression: string): ReturnType<typeof jsonata> {
  const known = compiled.get(expression);
  if (known) return known;
  try {
    const expr = jsonata(expression);
    if (compiled.size > 500) compiled.clear();
    compiled.set(expression, expr);
    return expr;
  } catch (err) {
    const e = err as { message?: string; position?: number };
    throw new ExpressionError(
      expression,
      `${e.message ?? 'invalid expression'}${e.position !== undefined ? ` (at ${e.position})` : ''}`,
    );
  }
}

/** The longest sequence an expression may build (`[1..10000000]` would hold the runner's memory). */
export const EXPRESSION_MAX_SEQUENCE = 100_000;

/**
 * Evaluates against the scope. A result JSON cannot hold (a function, undefined) becomes null.
 * JSONata's own guardrails bound the time, the call depth and the sequence length on every
 * evaluation step, so a runaway expression stops with an error instead of holding the runner.
 */
export async function evaluate(expression: string, scope: JsonObject): Promise<Json> {
  parseExpression(expression);
  // Checked before the run: JSONata's guardrails bound what it builds, not what it is handed.
  const size = JSON.stringify(scope).length;
  if (size > EXPRESSION_MAX_INPUT_BYTES)
    throw new ExpressionError(
      expression,
      `its data is ${size} bytes, over the ${EXPRESSION_MAX_INPUT_BYTES}-byte limit`,
    );
  const expr = jsonata(expression, {
    timeout: EXPRESSION_TIMEOUT_MS,
    stack: EXPRESSION_MAX_DEPTH,
    sequence: EXPRESSION_MAX_SEQUENCE,
  });
  try {
    return toJson(await expr.evaluate(scope), 0);
  } catch (err) {
    const e = err as { message?: string; code?: string; value?: unknown };
    const why =
      e.code === 'D1012'
        ? `took longer than ${EXPRESSION_TIMEOUT_MS} ms`
        : e.code === 'D1011'
          ? `recursed deeper than ${EXPRESSION_MAX_DEPTH}`
          : (e.message ?? e.code ?? String(err));
    throw new ExpressionError(expression, why);
  }
}

function toJson(value: unknown, depth: number): Json {
  if (depth > EXPRESSION_MAX_DEPTH) return null;
  if (value === undefined || typeof value === 'function') return null;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (Array.isArray(value)) return value.map((v) => toJson(v, depth + 1));
  if (typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([k]) => !k.startsWith('__'))
        .map(([k, v]) => [k, toJson(v, depth + 1)]),
    );
  return null;
}

/** A value as a condition: JSONata's truthiness (empty arrays and strings, 0, null are false). */
export function truthy(value: Json): boolean {
  if (Array.isArray(value)) return value.length > 0;
  return Boolean(value);
}
