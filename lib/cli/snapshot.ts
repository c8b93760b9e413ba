import { writeFile } from 'node:fs/promises';
import { mergePolicy, policyFromEnv } from '../browser/guard-policy.ts';
import { closeSharedBrowser, openSession } from '../browser/session.ts';
import { snapshot } from '../perception/snapshot.ts';
import { setOfMarks } from '../perception/som.ts';
import { intFlag, parse, urlArg } from './args.ts';

export const SNAPSHOT_USAGE =
  'browserfn snapshot <url> [--selector S] [--budget TOKENS] [--chunk N] [--som out.png] [--json]';

/** The operator typed this URL: its host is allowed for this run (redirects elsewhere are still checked). */
export function policyForCli(url: string) {
  const u = new URL(url);
  return mergePolicy(policyFromEnv(), { allowPrivate: false, allowHosts: [u.host] });
}

export async function snapshotCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { flags, positionals } = parse(argv, {
    selector: { type: 'string' },
    budget: { type: 'string' },
    chunk: { type: 'string' },
    som: { type: 'string' },
    json: { type: 'boolean' },
  });
  const url = urlArg(positionals[0]);
  const budget = intFlag(flags, 'budget');
  const chunk = flags.chunk === undefined ? undefined : (intFlag(flags, 'chunk') ?? 1) - 1;
  const session = await openSession({ url, policy: policyForCli(url) });
  try {
    const snap = await snapshot(session.page, {
      ...(typeof flags.selector === 'string' ? { selector: flags.selector } : {}),
      ...(budget !== undefined ? { budget } : {}),
      ...(chunk !== undefined ? { chunk } : {}),
    });
    if (typeof flags.som === 'string') await writeFile(flags.som, await setOfMarks(session.page, snap));
    if (flags.json) out(JSON.stringify(snap, null, 2));
    else {
      out(snap.tree);
      const s = snap.stats;
      out(
        `\n— ${s.elements} elements (${s.interactive} interactive), ${s.chars} chars, ~${s.tokens} tokens, ${s.ms} ms` +
          `, confidence ${snap.confidence}${snap.chunk ? `, chunk ${snap.chunk.index + 1}/${snap.chunk.count}` : ''}`,
      );
    }
    return 0;
  } finally {
    await session.close();
    await closeSharedBrowser();
  }
}
