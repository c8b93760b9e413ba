// Child process for the workflow kill-and-resume test: runs a whole run (the local state machine,
// the stores named in env: DynamoDB + S3 emulators) until the test kills it with SIGKILL. Each slice
// gets 1 ms of working time, so every slice runs one node and checkpoints.
import { mergePolicy } from '../../../lib/browser/guard-policy.ts';
import { sharedBrowser } from '../../../lib/browser/session.ts';
import { agentSliceRunner } from '../../../lib/runs/agent-slice-binding.ts';
import { runHandlers } from '../../../lib/runs/handlers.ts';
import { startLocalRun } from '../../../lib/runs/local-runner.ts';
import { storesFromEnv } from '../../../lib/store/config.ts';

const env = process.env;
const stores = storesFromEnv(JSON.parse(env.WF_STORES_ENV!));
const handlers = runHandlers({
  runStore: stores.runs,
  evidence: stores.evidence,
  workflows: stores.workflows,
  slices: agentSliceRunner,
  browser: sharedBrowser,
  policy: mergePolicy({ allowPrivate: false, allowHosts: [] }, { allowHosts: [env.WF_HOST!] }),
  // No model: a deterministic workflow needs none.
  llmFor: async () => undefined,
  sliceBudgetMs: 1,
  onSlice: (e) => process.stdout.write(`slice ${e.sampleId} ${e.final ? 'final' : 'more'}\n`),
});
await startLocalRun(JSON.parse(env.WF_INPUT!), handlers, { retryPauseMs: 1 }).result;
process.stdout.write('run returned\n');
process.exit(0);
