// Child process for the kill-and-resume test: runs one agent slice against the scripted model and
// local stores named in env, until the test kills it (SIGKILL, no chance to clean up).
import { runSlice } from '../../../lib/agent/slice.ts';
import { newAgentState, stateFromJson } from '../../../lib/agent/state.ts';
import { mergePolicy } from '../../../lib/browser/guard-policy.ts';
import { openSession } from '../../../lib/browser/session.ts';
import { createLlmClient } from '../../../lib/llm/client.ts';
import { LocalEvidenceStore } from '../../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../../lib/store/local-run-store.ts';

const env = process.env;
const root = env.AGENT_ROOT!;
const runStore = new LocalRunStore(`${root}/runs`);
const evidence = new LocalEvidenceStore(`${root}/evidence`);
const policy = mergePolicy({ allowPrivate: false, allowHosts: [] }, { allowHosts: [env.AGENT_HOST!] });
const init = JSON.parse(env.AGENT_INIT!);
const saved = await runStore.loadCheckpoint(init.tenant, init.runId, init.sampleId);
const state = saved ? stateFromJson(saved.state) : newAgentState(init);
await runSlice(
  state,
  {
    runStore,
    evidence,
    llm: createLlmClient({
      provider: 'openai',
      model: 'gpt-4.1-mini',
      baseURL: env.AGENT_MODEL_URL!,
      apiKey: 'sk-test',
      timeoutMs: 120_000,
    }),
    newPage: async () => {
      const s = await openSession({ policy });
      return { page: s.page, close: () => s.close() };
    },
    onStep: (s) => process.stdout.write(`step ${s.step}\n`),
  },
  { deadline: Date.now() + 120_000 },
);
process.stdout.write('slice returned\n');
process.exit(0);
