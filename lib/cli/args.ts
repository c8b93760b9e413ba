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
    throw new UsageError((err as Error).message.split('\n')[0] ?? 'bad arguments');
  }
}

export function intFlag(flags: Flags, name: string): number | undefined {
  const v = flags[name];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (typeof v !== 'string' || !Number.isInteger(n) || n <= 0)
    throw new UsageError(`--${name} expects a positive whole number, got "${String(v)}"`);
  return n;
}
