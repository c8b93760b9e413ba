/**
 * The half of act / observe / extract that needs the browser, the model SDKs and the ops: loaded by
 * ops.ts only after the arguments are checked, so a usage error answers without loading them.
 */
import { join } from 'node:path';
import { modelFor, noting } from '../api/run-op.ts';
import { closeSharedBrowser } from '../browser/session.ts';
import { ActionCache } from '../ops/cache.ts';
import { goneError } from '../ops/gone.ts';
import type { OpContext } from '../ops/types.ts';
import { LocalCacheStore } from '../store/local-cache.ts';
import { type Flags, intFlag, UsageError, varFlags } from './args.ts';
import { openPage, policyForCli } from './open.ts';
import type { PageArg } from './page-arg.ts';
import { startWaitNotice, type Waiting } from './wait-notice.ts';

export { act } from '../ops/act.ts';
export { extract } from '../ops/extract.ts';
export { explainGoneAct } from '../ops/gone.ts';
export { observe } from '../ops/observe.ts';

export async function withContext<T>(
  page: PageArg,
  flags: Flags,
  fn: (ctx: OpContext) => Promise<T>,
): Promise<T & { status?: number }> {
  const policy = policyForCli(page);
  const vision = flags.vision;
  if (vision !== undefined && vision !== 'fallback' && vision !== 'always' && vision !== 'never')
    throw new UsageError('--vision expects fallback, always or never');
  const budget = intFlag(flags, 'budget');
  const vars = varFlags(flags);
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
