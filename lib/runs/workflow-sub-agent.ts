/**
 * The `agent` node of a workflow sample: lib/agent's loop on a sub-goal, run to its end inside the
 * node. Its checkpoints and result stay in memory (the sample has one checkpoint and one result, the
 * workflow's); its evidence goes under its own sample folder beside the sample's.
 */
import { runAgent } from '../agent/run-agent.ts';
import type { Checkpoint, JsonObject, ResultRecord, RunStore } from '../store/ports.ts';
import type { WorkflowDeps } from '../workflows/types.ts';
import type { SliceDeps, SliceState } from './slice-runner.ts';

/** A run store whose checkpoints and results for the sub-agent live in this process only. */
function scratchStore(base: RunStore): RunStore {
  const checkpoints = new Map<string, Checkpoint>();
  const results = new Map<string, ResultRecord>();
  const own: Partial<RunStore> = {
    saveCheckpoint: async (_t, _r, s, cp) => {
      if ((checkpoints.get(s)?.seq ?? -1) >= cp.seq) return false;
      checkpoints.set(s, cp);
      return true;
    },
    loadCheckpoint: async (_t, _r, s) => checkpoints.get(s),
    putResult: async (r) => {
      if (results.has(r.sampleId)) return 'exists';
      results.set(r.sampleId, r);
      return 'written';
    },
    getResult: async (_t, _r, s) => results.get(s),
  };
  return new Proxy(base, {
    get(target, prop, receiver) {
      if (prop in own) return own[prop as keyof RunStore];
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

export function inlineSubAgent(
  sample: Pick<SliceState, 'tenant' | 'runId' | 'sampleId'>,
  deps: SliceDeps,
  currentUrl: () => string,
): WorkflowDeps['runAgent'] {
  let n = 0;
  return async (goal, config) => {
    const llm = deps.llm;
    if (!llm) throw new Error("the agent node needs a model: set the spec's model or BROWSERFN_MODEL");
    n += 1;
    const state = await runAgent(
      {
        tenant: sample.tenant,
        runId: sample.runId,
        sampleId: `${sample.sampleId}-agent-${n}`,
        url: currentUrl(),
        task: {
          goal,
          ...(config.maxSteps ? { maxSteps: config.maxSteps } : {}),
          ...(config.schema ? { schema: config.schema } : {}),
          ...(config.requiredFields ? { requiredFields: config.requiredFields } : {}),
        },
      },
      {
        runStore: scratchStore(deps.runStore),
        evidence: deps.evidence,
        llm,
        newPage: deps.newPage,
        ...(deps.checkNavigation ? { checkNavigation: deps.checkNavigation } : {}),
        ...(deps.variables ? { variables: deps.variables } : {}),
      },
    );
    return {
      ok: state.status === 'done',
      data: state.data as JsonObject,
      reason: state.reason ?? state.status,
      usage: { ...state.usage, model: '' },
    };
  };
}
