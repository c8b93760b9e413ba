/**
 * `browserfn repair <script.ts|.js> --url <url> [--out fixed.ts] [--error "…" --line N]`: the
 * script's steps run on the page until the broken one, the model repairs it there (or deletes it
 * when it is done already or obsolete), the script goes on; each repair is printed with its diff,
 * the repaired script written to --out (default: beside the script, `name.repaired.ts`; never over
 * the original). An assertion whose expected value would change is left as it was and reported
 * for review unless --allow-assertion-changes. Exit 0 when repaired or nothing was broken.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { modelFor } from '../api/run-op.ts';
import { assertNavigable } from '../browser/guard.ts';
import { guardedGoto } from '../browser/navigate.ts';
import { closeSharedBrowser, openSession } from '../browser/session.ts';
import { forCommandLine, noModelError } from '../llm/config.ts';
import { repairScript } from '../scenarios/repair/repair.ts';
import { ScriptError } from '../scenarios/repair/script.ts';
import { intFlag, parse, UsageError, varFlags } from './args.ts';
import { policyForCli } from './open.ts';
import { pageArg } from './page-arg.ts';

export const REPAIR_USAGE =
  'browserfn repair <script.ts|script.js> --url <url> [--out fixed.ts] [--error "message" --line N] [--allow-assertion-changes] [--var name=value]… [--model M] [--step-timeout ms]';

const OPTIONS = {
  url: { type: 'string' },
  out: { type: 'string' },
  error: { type: 'string' },
  line: { type: 'string' },
  'allow-assertion-changes': { type: 'boolean' },
  var: { type: 'string', multiple: true },
  model: { type: 'string' },
  'step-timeout': { type: 'string' },
} as const;

/** Where the repaired script goes when --out is not given: beside it, never over it. */
export const defaultOut = (file: string) =>
  file.replace(/(\.[cm]?[jt]sx?)?$/, (ext) => `.repaired${ext || '.ts'}`);

export async function repairCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { flags, positionals } = parse(argv, OPTIONS);
  const file = positionals[0];
  if (!file) throw new UsageError('missing <script.ts>');
  if (typeof flags.url !== 'string') throw new UsageError('--url is required: the page the script starts on');
  const page = pageArg(flags.url, 'url');
  if (page.file) throw new UsageError('--url: repair takes an http(s) URL');
  const line = intFlag(flags, 'line');
  if (line !== undefined && typeof flags.error !== 'string')
    throw new UsageError('--line goes with --error "the message the step failed with"');
  const stepTimeoutMs = intFlag(flags, 'step-timeout');
  let source: string;
  try {
    source = await readFile(file, 'utf8');
  } catch {
    throw new UsageError(`cannot read the script ${file}`);
  }
  const vars = varFlags(flags);
  const policy = policyForCli(page);
  const llm = await modelFor(typeof flags.model === 'string' ? { model: flags.model } : {}, { policy });
  if (!llm) throw new Error(`repair needs a model. ${forCommandLine(noModelError().message)}`);
  const session = await openSession({ policy });
  try {
    await guardedGoto(session.page, page.url);
    await session.page.waitForLoadState('load', { timeout: 10_000 }).catch(() => undefined);
    const result = await repairScript({
      source,
      fileName: basename(file),
      ...(typeof flags.error === 'string'
        ? { error: { message: flags.error, ...(line !== undefined ? { line } : {}) } }
        : {}),
      page: session.page,
      llm,
      checkNavigation: (u) => assertNavigable(u, policy),
      ...(vars ? { variables: vars } : {}),
      ...(flags['allow-assertion-changes'] ? { allowAssertionChanges: true } : {}),
      ...(stepTimeoutMs ? { stepTimeoutMs } : {}),
      onEvent: out,
    }).catch((err: unknown) => {
      if (err instanceof ScriptError) throw new UsageError(err.message);
      throw err;
    });
    for (const r of result.repairs)
      out(
        `step ${r.step} (line ${r.line}) ${r.after === null ? 'deleted' : 'repaired'}${r.applied ? '' : ' — NOT applied, for review'}${r.review ? `: ${r.review}` : ''}\n${r.diff}`,
      );
    const { iterations: _iterations, script, ...shown } = result;
    out(JSON.stringify(shown, null, 2));
    if (script !== undefined) {
      const target = typeof flags.out === 'string' ? flags.out : defaultOut(file);
      await writeFile(target, script);
      out(`wrote ${target}`);
    }
    return result.status === 'repaired' || result.status === 'unchanged' ? 0 : 1;
  } finally {
    await session.close();
    await closeSharedBrowser();
  }
}
