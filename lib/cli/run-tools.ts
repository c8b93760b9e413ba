/** `browserfn report <run>` and `browserfn verify <run>` over the local stores of `browserfn run`. */
import type { ManifestProblem } from '../store/manifest.ts';
import { idProblem } from '../store/names.ts';
import { parse, UsageError } from './args.ts';
import { CLI_TENANT, localStores } from './local-stores.ts';

function runArg(argv: string[]) {
  const { flags, positionals } = parse(argv, { out: { type: 'string' }, head: { type: 'string' } });
  const runId = positionals[0];
  if (!runId) throw new UsageError('missing <run-id>');
  const problem = idProblem('<run-id>', runId);
  if (problem) throw new UsageError(problem);
  if (flags.head !== undefined && !/^[0-9a-f]{64}$/.test(String(flags.head)))
    throw new UsageError('--head: the 64 hex digits of a chain head (printed when the run was merged)');
  const head = typeof flags.head === 'string' ? flags.head : undefined;
  return { runId, stores: localStores(flags), head };
}

export async function reportCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { runId, stores } = runArg(argv);
  // Loaded after the arguments are checked: a usage error answers without the report's renderer.
  const { writeReport } = await import('../runs/report.ts');
  const key = await writeReport(stores.runStore, stores.evidence, CLI_TENANT, runId);
  if (!key) throw new UsageError(`no run "${runId}" under ${stores.base}`);
  out(stores.evidence.pathOf(key));
  return 0;
}

/** A problem in a few words, the way a reader of its one-line verdict wants it. */
function what(problem: ManifestProblem): string {
  switch (problem.kind) {
    case 'edited':
      return problem.where === 'result'
        ? 'stored result edited'
        : problem.where === 'file'
          ? 'file edited'
          : 'manifest entry changed';
    case 'removed':
      return problem.where === 'result'
        ? 'stored result removed'
        : problem.where === 'file'
          ? 'file removed'
          : 'manifest entries removed';
    case 'reordered':
      return 'manifest entries reordered';
    case 'added':
      return problem.where === 'result' ? 'stored result added' : 'file added';
    case 'head':
      return 'chain head differs from the run';
  }
}

export async function verifyCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { runId, stores, head } = runArg(argv);
  const { verifyWholeRun } = await import('../runs/verify-run.ts');
  const check = await verifyWholeRun(stores.runStore, stores.evidence, CLI_TENANT, runId, head);
  if (!check) throw new UsageError(`no run "${runId}" under ${stores.base}`);
  if (check.ok) {
    out(
      `ok: ${check.files} evidence files match the manifest (head ${check.expectedHead}${head ? ', the one you kept' : ''}), and the stored results match the sealed results.json`,
    );
    return 0;
  }
  // One line per problem, each naming its entry or file, so a reader sees all of them at once.
  const problems = check.problems ?? (check.problem ? [check.problem] : []);
  for (const p of problems) {
    const where = p.index !== undefined ? `entry ${p.index + 1} (${p.key}): ` : p.key ? `${p.key}: ` : '';
    out(`TAMPERED: ${where}${what(p)}: ${p.message}`);
  }
  return 1;
}
