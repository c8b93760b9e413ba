/**
 * `browserfn explore <url> "<goal>" [--var name=value]… [--out DIR]`: exploratory mode. Each
 * iteration is printed as it happens, the journeys found at the end; with --out, every journey is
 * written as `<id>.scenario.json` (replay it with `browserfn scenario <url> <id>.scenario.json`)
 * and every proved one as `<id>.workflow.json` (replays with zero tokens). Exit 0 when the
 * exploration completed, 1 when it ended stuck, out of budget or failed.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { modelFor } from '../api/run-op.ts';
import { assertNavigable } from '../browser/guard.ts';
import { guardedGoto } from '../browser/navigate.ts';
import { closeSharedBrowser, openSession } from '../browser/session.ts';
import { forCommandLine, noModelError } from '../llm/config.ts';
import { compileJourney, type ExploreIteration, explore } from '../scenarios/explore.ts';
import { intFlag, parse, UsageError, varFlags } from './args.ts';
import { policyForCli } from './open.ts';
import { pageArg } from './page-arg.ts';

export const EXPLORE_USAGE =
  'browserfn explore <url> "<goal>" [--var name=value]… [--max-iterations N] [--out DIR] [--model M]';

const OPTIONS = {
  var: { type: 'string', multiple: true },
  'max-iterations': { type: 'string' },
  out: { type: 'string' },
  model: { type: 'string' },
} as const;

const formatIteration = (it: ExploreIteration) =>
  [
    `${it.iteration}. [${it.journey}] ${it.step || '(looking)'}  ${it.url}  (${it.asked})`,
    ...(it.reasoning ? [`  thought: ${it.reasoning.slice(0, 300)}`] : []),
    ...it.results.map((r) => `  ${r.slice(0, 300)}`),
    ...(it.note ? [`  ! ${it.note}`] : []),
  ].join('\n');

export async function exploreCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { flags, positionals } = parse(argv, OPTIONS);
  const page = pageArg(positionals[0]);
  if (page.file) throw new UsageError('<url>: explore takes an http(s) URL');
  const goal = positionals[1]?.trim();
  if (!goal) throw new UsageError('missing "<goal>": the journeys to find, in plain words');
  const maxIterations = intFlag(flags, 'max-iterations');
  const vars = varFlags(flags);
  const policy = policyForCli(page);
  const llm = await modelFor(typeof flags.model === 'string' ? { model: flags.model } : {}, { policy });
  if (!llm) throw new Error(`exploring needs a model. ${forCommandLine(noModelError().message)}`);
  const session = await openSession({ policy });
  try {
    await guardedGoto(session.page, page.url);
    await session.page.waitForLoadState('load', { timeout: 10_000 }).catch(() => undefined);
    const result = await explore({
      page: session.page,
      llm,
      goal,
      checkNavigation: (u) => assertNavigable(u, policy),
      ...(vars ? { variables: vars } : {}),
      ...(maxIterations ? { maxIterations } : {}),
      onIteration: (it) => out(formatIteration(it)),
    });
    out(
      JSON.stringify(
        {
          status: result.status,
          ...(result.reason ? { reason: result.reason } : {}),
          journeys: result.journeys.map((j) => ({ id: j.id, status: j.status, steps: j.scenario.steps })),
          usage: result.usage,
        },
        null,
        2,
      ),
    );
    if (typeof flags.out === 'string') {
      await mkdir(flags.out, { recursive: true });
      for (const j of result.journeys) {
        await writeFile(join(flags.out, `${j.id}.scenario.json`), `${JSON.stringify(j.scenario, null, 2)}\n`);
        if (j.status !== 'complete') continue;
        const { workflow, notCarried } = compileJourney(j);
        await writeFile(join(flags.out, `${j.id}.workflow.json`), `${JSON.stringify(workflow, null, 2)}\n`);
        for (const n of notCarried) out(`note: ${j.id}: not in the workflow: ${n}`);
      }
      out(`wrote ${result.journeys.length} journey(s) to ${flags.out}`);
    }
    return result.status === 'complete' ? 0 : 1;
  } finally {
    await session.close();
    await closeSharedBrowser();
  }
}
