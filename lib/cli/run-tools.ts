/** `browserfn report <run>` and `browserfn verify <run>` over the local stores of `browserfn run`. */
import { writeReport } from '../runs/report.ts';
import type { ManifestProblem } from '../store/manifest.ts';
import { verifyRun } from '../store/manifest-store.ts';
import { parse, UsageError } from './args.ts';
import { CLI_TENANT, localStores } from './run.ts';

function runArg(argv: string[]) {
  const { flags, positionals } = parse(argv, { out: { type: 'string' } });
  const runId = positionals[0];
  if (!runId) throw new UsageError('missing <run-id>');
  return { runId, stores: localStores(flags) };
}

export async function reportCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { runId, stores } = runArg(argv);
  const key = await writeReport(stores.runStore, stores.evidence, CLI_TENANT, runId);
  if (!key) throw new UsageError(`no run "${runId}" under ${stores.base}`);
  out(stores.evidence.pathOf(key));
  return 0;
}

/** The first problem in a few words, the way a reader of the one-line verdict wants it. */
function what(problem: ManifestProblem): string {
  switch (problem.kind) {
    case 'edited':
      return problem.where === 'file' ? 'file edited' : 'manifest entry changed';
    case 'removed':
      return problem.where === 'file' ? 'file removed' : 'manifest entries removed';
    case 'reordered':
      return 'manifest entries reordered';
    case 'added':
      return 'file added';
    case 'head':
      return 'chain head differs from the run';
  }
}

export async function verifyCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { runId, stores } = runArg(argv);
  const run = await stores.runStore.getRun(CLI_TENANT, runId);
  if (!run) throw new UsageError(`no run "${runId}" under ${stores.base}`);
  if (!run.manifestHead) throw new Error(`run ${runId} has no manifest yet (it has not been merged)`);
  const check = await verifyRun(stores.evidence, CLI_TENANT, runId, run.manifestHead);
  if (check.ok) {
    out(`ok: ${check.files} evidence files match the manifest (head ${run.manifestHead})`);
    return 0;
  }
  const p = check.problem!;
  const where = p.index !== undefined ? `entry ${p.index + 1} (${p.key}): ` : p.key ? `${p.key}: ` : '';
  out(`TAMPERED: ${where}${what(p)}: ${p.message}`);
  return 1;
}
