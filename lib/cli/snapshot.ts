import { writeFile } from 'node:fs/promises';
import { NetworkBlockedError } from '../browser/guard.ts';
import { PageUnreachableError } from '../browser/page-watch.ts';
import { closeSharedBrowser } from '../browser/session.ts';
import { settle } from '../browser/settle.ts';
import { snapshot } from '../perception/snapshot.ts';
import { setOfMarks } from '../perception/som.ts';
import { intFlag, parse } from './args.ts';
import { openPage } from './open.ts';
import { pageArg } from './page-arg.ts';

export async function snapshotCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { flags, positionals } = parse(argv, {
    selector: { type: 'string' },
    budget: { type: 'string' },
    chunk: { type: 'string' },
    som: { type: 'string' },
    json: { type: 'boolean' },
  });
  const page = pageArg(positionals[0]);
  const budget = intFlag(flags, 'budget');
  const chunk = flags.chunk === undefined ? undefined : (intFlag(flags, 'chunk') ?? 1) - 1;
  const session = await openPage(page, { what: '' });
  try {
    await settle(session.page);
    // The page may have moved on by itself (a refresh, a script) to somewhere refused or unreachable.
    const problem = await session.problem();
    if (problem?.kind === 'blocked')
      throw new NetworkBlockedError(problem.url, 'navigation', problem.message);
    if (problem) throw new PageUnreachableError(problem.url, problem.message);
    const { complete: _forTheMatcher, ...snap } = await snapshot(session.page, {
      ...(typeof flags.selector === 'string' ? { selector: flags.selector } : {}),
      ...(budget !== undefined ? { budget } : {}),
      ...(chunk !== undefined ? { chunk } : {}),
    });
    if (typeof flags.som === 'string') await writeFile(flags.som, await setOfMarks(session.page, snap));
    const status = session.status();
    if (flags.json) out(JSON.stringify(status === undefined ? snap : { ...snap, status }, null, 2));
    else {
      out(snap.tree);
      const s = snap.stats;
      out(
        `\n— ${s.elements} elements (${s.interactive} interactive), ${s.chars} chars, ~${s.tokens} tokens, ${s.ms} ms` +
          `, confidence ${snap.confidence}${snap.chunk ? `, chunk ${snap.chunk.index + 1}/${snap.chunk.count}` : ''}` +
          `${status !== undefined && status >= 400 ? `, HTTP ${status}` : ''}`,
      );
    }
    return 0;
  } finally {
    await session.close();
    await closeSharedBrowser();
  }
}
