import { mergePolicy, policyFromEnv } from '../browser/guard-policy.ts';
import type { Session } from '../browser/session.ts';
import { UsageError } from './args.ts';
import type { PageArg } from './page-arg.ts';
import { startWaitNotice, type Waiting } from './wait-notice.ts';

/** The operator typed this URL: its host is allowed for this run (redirects elsewhere are still checked). */
export function policyForCli(page: PageArg) {
  if (page.file) return policyFromEnv();
  const u = new URL(page.url);
  return mergePolicy(policyFromEnv(), { allowPrivate: false, allowHosts: [u.host] });
}

/** Opens the page a command was given, saying on a terminal what it waits for when that takes a while. */
export async function openPage(page: PageArg, waiting: Waiting): Promise<Session> {
  if (page.file && process.env.BROWSERFN_CDP_URL)
    throw new UsageError('a local file needs the embedded browser: unset BROWSERFN_CDP_URL');
  waiting.what = `${page.url} to load`;
  const stop = startWaitNotice(waiting);
  try {
    // Playwright loads here, not with this module: policyForCli alone needs none of it.
    const { openSession } = await import('../browser/session.ts');
    return await openSession({
      url: page.url,
      policy: policyForCli(page),
      ...(page.file ? { allowedFile: page.file } : {}),
    });
  } finally {
    stop();
  }
}
