import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { modelFor } from '../api/run-op.ts';
import { closeSharedBrowser, openSession } from '../browser/session.ts';
import { act } from '../ops/act.ts';
import { ActionCache } from '../ops/cache.ts';
import { extract } from '../ops/extract.ts';
import { observe } from '../ops/observe.ts';
import type { OpContext } from '../ops/types.ts';
import { LocalCacheStore } from '../store/local-cache.ts';
import { type Flags, intFlag, parse, UsageError, urlArg } from './args.ts';
import { policyForCli } from './snapshot.ts';

export const ACT_USAGE =
  'browserfn act <url> "<instruction>" [--model provider/model] [--var name=value]… [--selector S] [--no-cache]';
export const OBSERVE_USAGE =
  'browserfn observe <url> ["<instruction>"] [--model provider/model] [--selector S]';
export const EXTRACT_USAGE =
  'browserfn extract <url> ["<instruction>"] [--schema file.json] [--model provider/model] [--selector S]';

const OPTIONS = {
  model: { type: 'string' },
  var: { type: 'string', multiple: true },
  selector: { type: 'string' },
  vision: { type: 'string' },
  budget: { type: 'string' },
  schema: { type: 'string' },
  'no-cache': { type: 'boolean' },
} as const;

function variables(flags: Flags): Record<string, string> | undefined {
  const list = flags.var as unknown as string[] | undefined;
  if (!list?.length) return undefined;
  const out: Record<string, string> = {};
  for (const item of list) {
    const at = item.indexOf('=');
    if (at <= 0) throw new UsageError(`--var expects name=value, got "${item.split('=')[0]}…"`);
    out[item.slice(0, at)] = item.slice(at + 1);
  }
  return out;
}

async function withContext<T>(url: string, flags: Flags, fn: (ctx: OpContext) => Promise<T>): Promise<T> {
  const policy = policyForCli(url);
  const vision = flags.vision;
  if (vision !== undefined && vision !== 'fallback' && vision !== 'always' && vision !== 'never')
    throw new UsageError('--vision expects fallback, always or never');
  const budget = intFlag(flags, 'budget');
  const vars = variables(flags);
  const llm = await modelFor(typeof flags.model === 'string' ? { model: flags.model } : {}, { policy });
  const session = await openSession({ url, policy });
  try {
    const cacheDir = process.env.BROWSERFN_CACHE_DIR ?? join(process.cwd(), '.browserfn', 'cache');
    return await fn({
      page: session.page,
      checkNavigation: session.checkNavigation,
      ...(llm ? { llm } : {}),
      ...(vars ? { variables: vars } : {}),
      ...(flags['no-cache'] ? {} : { cache: new ActionCache(new LocalCacheStore(join(cacheDir, 'cli'))) }),
      options: {
        ...(typeof flags.selector === 'string' ? { selector: flags.selector } : {}),
        ...(vision ? { vision: vision as 'fallback' } : {}),
        ...(budget ? { budget } : {}),
      },
    });
  } finally {
    await session.close();
    await closeSharedBrowser();
  }
}

export async function actCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { flags, positionals } = parse(argv, OPTIONS);
  const url = urlArg(positionals[0]);
  const instruction = positionals[1];
  if (!instruction?.trim()) throw new UsageError('missing "<instruction>"');
  const result = await withContext(url, flags, (ctx) => act(ctx, instruction));
  out(JSON.stringify(result, null, 2));
  return result.success ? 0 : 1;
}

export async function observeCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { flags, positionals } = parse(argv, OPTIONS);
  const url = urlArg(positionals[0]);
  const result = await withContext(url, flags, (ctx) => observe(ctx, positionals[1]));
  out(JSON.stringify(result, null, 2));
  return 0;
}

export async function extractCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { flags, positionals } = parse(argv, OPTIONS);
  const url = urlArg(positionals[0]);
  let schema: Record<string, unknown> | undefined;
  if (typeof flags.schema === 'string') {
    let text: string;
    try {
      text = await readFile(flags.schema, 'utf8');
    } catch {
      throw new UsageError(`--schema: cannot read ${flags.schema}`);
    }
    try {
      schema = JSON.parse(text) as Record<string, unknown>;
    } catch (err) {
      throw new UsageError(`--schema: ${flags.schema} is not valid JSON (${(err as Error).message})`);
    }
  }
  const result = await withContext(url, flags, (ctx) => extract(ctx, positionals[1], schema));
  out(JSON.stringify(result, null, 2));
  return 0;
}
