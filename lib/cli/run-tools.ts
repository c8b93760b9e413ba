/** `browserfn report <run>` and `browserfn verify <run>` over the local stores of `browserfn run`. */
import { verifyManifest } from '../runs/manifest-binding.ts';
import { writeReport } from '../runs/report.ts';
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

export async function verifyCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { runId, stores } = runArg(argv);
  const run = await stores.runStore.getRun(CLI_TENANT, runId);
  if (!run) throw new UsageError(`no run "${runId}" under ${stores.base}`);
  if (!run.manifestHead) throw new Error(`run ${runId} has no manifest yet (it has not been merged)`);
  const check = await verifyManifest(stores.evidence, CLI_TENANT, runId, run.manifestHead);
  if (check.ok) {
    out(`ok: ${check.entries} evidence files match the manifest (head ${run.manifestHead})`);
    return 0;
  }
  const bad = check.firstBad!;
  out(`TAMPERED: entry ${bad.index + 1} (${bad.key}): ${bad.problem}`);
  return 1;
}
