import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { modelFor, noting } from '../api/run-op.ts';
import { closeSharedBrowser } from '../browser/session.ts';
import { forCommandLine } from '../llm/config.ts';
import { act } from '../ops/act.ts';
import { ActionCache } from '../ops/cache.ts';
import { extract } from '../ops/extract.ts';
import { explainGoneAct, goneError } from '../ops/gone.ts';
import { observe } from '../ops/observe.ts';
import type { OpContext } from '../ops/types.ts';
import { LocalCacheStore } from '../store/local-cache.ts';
import { type Flags, intFlag, parse, UsageError } from './args.ts';
import { openPage, policyForCli } from './open.ts';
import { type PageArg, pageArg } from './page-arg.ts';
import { startWaitNotice, type Waiting } from './wait-notice.ts';

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

async function withContext<T>(
  page: PageArg,
  flags: Flags,
  fn: (ctx: OpContext) => Promise<T>,
): Promise<T & { status?: number }> {
  const policy = policyForCli(page);
  const vision = flags.vision;
  if (vision !== undefined && vision !== 'fallback' && vision !== 'always' && vision !== 'never')
    throw new UsageError('--vision expects fallback, always or never');
  const budget = intFlag(flags, 'budget');
  const vars = variables(flags);
  const llm = await modelFor(typeof flags.model === 'string' ? { model: flags.model } : {}, { policy });
  const waiting: Waiting = { what: '' };
  const session = await openPage(page, waiting);
  waiting.what = `the page ${page.url}`;
  const stop = startWaitNotice(waiting);
  try {
    const cacheDir = process.env.BROWSERFN_CACHE_DIR ?? join(process.cwd(), '.browserfn', 'cache');
    let result: T;
    try {
      result = await fn({
        page: session.page,
        checkNavigation: session.checkNavigation,
        pageProblem: () => session.problem(),
        ...(llm ? { llm: noting(llm, waiting) } : {}),
        ...(vars ? { variables: vars } : {}),
        ...(flags['no-cache'] ? {} : { cache: new ActionCache(new LocalCacheStore(join(cacheDir, 'cli'))) }),
        options: {
          ...(typeof flags.selector === 'string' ? { selector: flags.selector } : {}),
          ...(vision ? { vision: vision as 'fallback' } : {}),
          ...(budget ? { budget } : {}),
        },
      });
    } catch (err) {
      // A page that answered 404/410 is why nothing was found on it: say that, not "could not resolve".
      throw goneError(session.status(), page.url) ?? err;
    }
    const status = session.status();
    return status === undefined ? (result as T & { status?: number }) : { ...result, status };
  } finally {
    stop();
    await session.close();
    await closeSharedBrowser();
  }
}

export async function actCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { flags, positionals } = parse(argv, OPTIONS);
  const page = pageArg(positionals[0]);
  const instruction = positionals[1];
  if (!instruction?.trim()) throw new UsageError('missing "<instruction>"');
  const acted = await withContext(page, flags, (ctx) => act(ctx, instruction));
  // A page that answered 404/410 is why nothing was found on it (the rule the API uses too).
  const explained = explainGoneAct(acted);
  const result =
    explained === acted && acted.error
      ? { ...acted, error: { ...acted.error, message: forCommandLine(acted.error.message) } }
      : explained;
  out(JSON.stringify(result, null, 2));
  // The JSON is for programs; a failure also gets its one line for the person at the terminal.
  if (!result.success)
    process.stderr.write(
      `browserfn: ${result.error ? `${result.error.kind}: ${result.error.message}` : result.message}\n`,
    );
  return result.success ? 0 : 1;
}

export async function observeCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { flags, positionals } = parse(argv, OPTIONS);
  const page = pageArg(positionals[0]);
  const result = await withContext(page, flags, (ctx) => observe(ctx, positionals[1]));
  out(JSON.stringify(result, null, 2));
  return 0;
}

export async function extractCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { flags, positionals } = parse(argv, OPTIONS);
  const page = pageArg(positionals[0]);
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
  const result = await withContext(page, flags, (ctx) => extract(ctx, positionals[1], schema));
  out(JSON.stringify(result, null, 2));
  return 0;
}
