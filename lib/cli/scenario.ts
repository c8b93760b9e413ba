/**
 * `browserfn scenario <url> [steps.yaml|steps.json] [--step "…"]…`: a step list carried out on the
 * page and proved step by step, each iteration printed as it happens, the result as JSON at the
 * end. `--compile f.json` writes the workflow of a passed scenario (replays with zero tokens),
 * `--playwright f.ts` the same as a standalone playwright-core script. Exit 0 only when it passed.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { modelFor } from '../api/run-op.ts';
import { assertNavigable } from '../browser/guard.ts';
import { guardedGoto } from '../browser/navigate.ts';
import { closeSharedBrowser, openSession } from '../browser/session.ts';
import { forCommandLine, noModelError } from '../llm/config.ts';
import { compileScenario } from '../scenarios/compile.ts';
import type { IterationRecord } from '../scenarios/run-scenario.ts';
import { runScenario } from '../scenarios/run-scenario.ts';
import { parseScenario, parseScenarioText, type Scenario, ScenarioError } from '../scenarios/spec.ts';
import { exportPlaywright } from '../workflows/export-playwright.ts';
import { parse, UsageError, varFlags } from './args.ts';
import { policyForCli } from './open.ts';
import { pageArg } from './page-arg.ts';

export const SCENARIO_USAGE =
  'browserfn scenario <url> [steps.yaml|steps.json] [--step "…"]… [--model M] [--var name=value]… [--vision text|som] [--compile f.json] [--playwright f.ts]';

const OPTIONS = {
  step: { type: 'string', multiple: true },
  model: { type: 'string' },
  var: { type: 'string', multiple: true },
  compile: { type: 'string' },
  playwright: { type: 'string' },
  vision: { type: 'string' },
} as const;

/** The steps from the file and/or the --step flags (file steps first). */
export async function scenarioFrom(file: string | undefined, steps: string[] | undefined): Promise<Scenario> {
  const fromFile: Scenario['steps'] = [];
  let vision: Scenario['vision'];
  if (file) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      throw new UsageError(`cannot read the step file ${file}`);
    }
    try {
      const parsed = parseScenarioText(text, basename(file));
      fromFile.push(...parsed.steps);
      vision = parsed.vision;
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  const all = [...fromFile, ...(steps ?? []).map((s) => ({ do: s }))];
  if (all.length === 0) throw new UsageError('no steps: give a steps.yaml / steps.json file or --step "…"');
  try {
    return parseScenario({ steps: all, ...(vision ? { vision } : {}) });
  } catch (err) {
    if (err instanceof ScenarioError) throw new UsageError(err.message);
    throw err;
  }
}

/** One iteration as a person follows it. */
export function formatIteration(it: IterationRecord): string {
  const lines = [
    `step ${it.step}.${it.iteration}  ${it.url}  → ${it.status}${it.asked !== it.status ? ` (asked ${it.asked})` : ''}`,
  ];
  if (it.cleared.length) lines.push(`  cleared: ${it.cleared.join('; ')}`);
  if (it.coordinates) lines.push('  coordinate commands offered (3 failed attempts on this step)');
  for (const l of it.looks ?? []) lines.push(`  look: ${l}`);
  if (it.reasoning) lines.push(`  thought: ${it.reasoning.slice(0, 300)}`);
  for (const r of it.blocker?.results ?? [])
    lines.push(`  ${r.ok ? '✓' : '✗'} (blocker) ${r.message.slice(0, 200)}`);
  for (const r of it.results)
    lines.push(`  ${r.skipped ? '–' : r.ok ? '✓' : '✗'} ${r.message.slice(0, 300)}`);
  if (it.refused) lines.push(`  ! ${it.refused.slice(0, 300)}`);
  return lines.join('\n');
}

export async function scenarioCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { flags, positionals } = parse(argv, OPTIONS);
  const page = pageArg(positionals[0]);
  if (page.file) throw new UsageError('<url>: scenarios take an http(s) URL');
  const scenario = await scenarioFrom(positionals[1], flags.step as string[] | undefined);
  if (flags.vision !== undefined) {
    if (flags.vision !== 'text' && flags.vision !== 'som')
      throw new UsageError(`--vision: text or som, not "${String(flags.vision)}"`);
    scenario.vision = flags.vision;
  }
  const vars = varFlags(flags);
  const policy = policyForCli(page);
  const llm = await modelFor(typeof flags.model === 'string' ? { model: flags.model } : {}, { policy });
  if (!llm) throw new Error(`scenarios need a model. ${forCommandLine(noModelError().message)}`);
  const session = await openSession({ policy });
  try {
    await guardedGoto(session.page, page.url);
    await session.page.waitForLoadState('load', { timeout: 10_000 }).catch(() => undefined);
    const result = await runScenario(scenario, {
      page: session.page,
      llm,
      checkNavigation: (u) => assertNavigable(u, policy),
      ...(vars ? { variables: vars } : {}),
      onIteration: (it) => out(formatIteration(it)),
      // Compiling or exporting: coordinate commands must state why no element of the outline would do.
      ...(flags.compile || flags.playwright ? { scriptMode: true } : {}),
    });
    const { memory: _memory, iterations: _iterations, recorded: _recorded, ...shown } = result;
    out(JSON.stringify(shown, null, 2));
    if (result.status === 'passed' && (flags.compile || flags.playwright)) {
      const { workflow, notCarried } = compileScenario(result);
      if (typeof flags.compile === 'string')
        await writeFile(flags.compile, `${JSON.stringify(workflow, null, 2)}\n`);
      if (typeof flags.playwright === 'string') await writeFile(flags.playwright, exportPlaywright(workflow));
      for (const n of notCarried) out(`note: not in the workflow: ${n}`);
    } else if (flags.compile || flags.playwright)
      out('note: nothing compiled: only a passed scenario compiles');
    return result.status === 'passed' ? 0 : 1;
  } finally {
    await session.close();
    await closeSharedBrowser();
  }
}
