import { parseArgs } from 'node:util';

/** A one-line usage error: printed as `browserfn: <message>` with exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export type Flags = Record<string, string | boolean | string[] | undefined>;

export function parse(
  argv: string[],
  options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>,
): { flags: Flags; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
    return { flags: values as Flags, positionals };
  } catch (err) {
    throw new UsageError(optionProblem(err as Error & { code?: string }));
  }
}

/**
 * Node's parseArgs messages in our own words: its unknown-option hint ends on an unbalanced quote and
 * its "ambiguous" one spans three lines, while a usage error is one line naming the option.
 */
export function optionProblem(err: { message: string; code?: string | undefined }): string {
  const name = /'(-{1,2}[^'\s<=]+)/.exec(err.message)?.[1];
  if (!name) return err.message.split('\n')[0] || 'bad arguments';
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION')
    return `unknown option ${name} (a value that starts with "-" goes after "--")`;
  if (/does not take an argument/.test(err.message)) return `${name} takes no value`;
  if (/argument missing|ambiguous/.test(err.message))
    return `${name} needs a value (to give one that starts with "-", write ${name}=-…)`;
  return err.message.split('\n')[0] ?? 'bad arguments';
}

export function intFlag(flags: Flags, name: string): number | undefined {
  const v = flags[name];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (typeof v !== 'string' || !Number.isInteger(n) || n <= 0)
    throw new UsageError(`--${name} expects a positive whole number, got "${String(v)}"`);
  return n;
}

/** `--var name=value`, repeated: the secret variables typed as %name% (the value is never echoed back). */
export function varFlags(flags: Flags): Record<string, string> | undefined {
  const v = flags.var;
  const list = typeof v === 'string' ? [v] : Array.isArray(v) ? v : [];
  if (!list.length) return undefined;
  const out: Record<string, string> = {};
  for (const item of list) {
    const at = item.indexOf('=');
    if (at <= 0) throw new UsageError(`--var expects name=value, got "${item.split('=')[0]}…"`);
    out[item.slice(0, at)] = item.slice(at + 1);
  }
  return out;
}
