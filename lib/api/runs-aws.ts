/**
 * The runs API on AWS: POST /v1/runs (and resume) starts an execution of the deployed run state
 * machine (the same ASL as the local runner, infra/state-machine.ts in `aws` mode); cancel stops it
 * and merges what was finished, as the local runner does. Execution names: the run id for the first
 * execution, `<runId>-<n>` for the n-th (a resume: Step Functions keeps names unique for 90 days).
 * Which execution is the run's latest is kept beside the run's evidence, outside `run_<id>/`.
 */
import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { mergeRun } from '../runs/merge.ts';
import type { ExecutionInput, ItemsLocation } from '../runs/run-records.ts';
import { keySegment } from '../store/keys.ts';
import type { EvidenceStore, RunStore } from '../store/ports.ts';
import type { WorkflowStore } from '../store/workflow-ports.ts';
import type { RunsApiDeps } from './runs.ts';
import { LaunchError } from './runs-admit.ts';

export interface AwsRunsOptions {
  runStore: RunStore;
  evidence: EvidenceStore;
  /** `arn:aws:states:<region>:<account>:stateMachine:<name>` (BROWSERFN_STATE_MACHINE_ARN). */
  stateMachineArn: string;
  /** Where the Distributed Map reads each run's sample ids (`itemsInBucket` over the evidence bucket). */
  items: ItemsLocation;
  client: SFNClient;
  /** The tenant's workflows: a mode "workflow" spec is checked against them before a run starts. */
  workflows?: WorkflowStore;
  log?: (e: { level: 'debug' | 'info' | 'warn'; msg: string; [k: string]: unknown }) => void;
}

const ARN = /^arn:[\w-]+:states:[\w-]+:\d{12}:stateMachine:[\w-]{1,80}$/;
/** Step Functions execution names: 1–80 of letters, digits, `-` and `_` (what our run ids use). */
const NAME = /^[A-Za-z0-9_-]{1,80}$/;

/** `…:stateMachine:NAME` + execution name → `…:execution:NAME:EXECUTION` (pure). */
export function executionArn(stateMachineArn: string, name: string): string {
  if (!ARN.test(stateMachineArn))
    throw new Error(
      `BROWSERFN_STATE_MACHINE_ARN must look like arn:aws:states:REGION:ACCOUNT:stateMachine:NAME, got "${stateMachineArn}"`,
    );
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
}

/** The name of a run's `attempt`-th execution (1 = the first). */
export function executionName(runId: string, attempt: number): string {
  const name = attempt <= 1 ? runId : `${runId}-${attempt}`;
  if (!NAME.test(name)) throw new Error(`run id "${runId}" cannot name a Step Functions execution`);
  return name;
}

interface ExecutionRecord {
  name: string;
  attempt: number;
  executionArn: string;
  startedAt: string;
}

const executionKey = (tenant: string, runId: string) =>
  `${keySegment(tenant)}/_state/run_${keySegment(runId)}/execution.json`;

export function awsRunsApi(o: AwsRunsOptions): RunsApiDeps {
  // Checked once at start-up, so a bad ARN is a clear configuration error, not a failed request.
  executionArn(o.stateMachineArn, 'check');

  async function latest(tenant: string, runId: string): Promise<ExecutionRecord | undefined> {
    const raw = await o.evidence.get(executionKey(tenant, runId));
    return raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as ExecutionRecord) : undefined;
  }

  async function status(record: ExecutionRecord): Promise<string | undefined> {
    try {
      const out = await o.client.send(new DescribeExecutionCommand({ executionArn: record.executionArn }));
      return out.status;
    } catch (err) {
      if (err instanceof ExecutionDoesNotExist) return undefined;
      throw err;
    }
  }

  return {
    ...(o.workflows ? { workflows: o.workflows } : {}),
    runStore: o.runStore,
    evidence: o.evidence,
    items: o.items,
    launch: async (input: ExecutionInput) => {
      const { tenant, runId } = input;
      const attempt = ((await latest(tenant, runId))?.attempt ?? 0) + 1;
      const name = executionName(runId, attempt);
      // Marked before the execution starts, so a cancel right after the start is never overwritten.
      await o.runStore.updateRun(tenant, runId, { status: 'running' });
      const remember = (arn: string) => {
        const record: ExecutionRecord = {
          name,
          attempt,
          executionArn: arn,
          startedAt: new Date().toISOString(),
        };
        return o.evidence.put(executionKey(tenant, runId), JSON.stringify(record), 'application/json');
      };
      let arn: string;
      try {
        const out = await o.client.send(
          new StartExecutionCommand({
            stateMachineArn: o.stateMachineArn,
            name,
            input: JSON.stringify(input),
          }),
        );
        arn = out.executionArn ?? executionArn(o.stateMachineArn, name);
      } catch (err) {
        // Another resume of this run started the same execution a moment ago: it is running.
        if (err instanceof ExecutionAlreadyExists) {
          // Remembered here too, so a cancel stops that one whichever call wrote last.
          await remember(executionArn(o.stateMachineArn, name));
          throw new LaunchError('conflict', `run ${runId} is already running (execution ${name})`);
        }
        const message = `could not start the run's state machine: ${(err as Error).message}`;
        o.log?.({ level: 'warn', msg: 'StartExecution failed', runId, error: (err as Error).message });
        await o.runStore.updateRun(tenant, runId, { status: 'failed', reason: message });
        throw new LaunchError('unavailable', message);
      }
      await remember(arn);
    },
    isActive: async (tenant, runId) => {
      const record = await latest(tenant, runId);
      return record ? (await status(record)) === 'RUNNING' : false;
    },
    stop: async (tenant, runId) => {
      const record = await latest(tenant, runId);
      if (!record || (await status(record)) !== 'RUNNING') return;
      try {
        await o.client.send(
          new StopExecutionCommand({ executionArn: record.executionArn, cause: 'cancelled by the caller' }),
        );
      } catch (err) {
        // Ended on its own between the two calls: its Merge state has run.
        if (err instanceof ExecutionDoesNotExist) return;
        throw err;
      }
      // A stopped execution never reaches its Merge state: merge here, so the run's files show what
      // was finished. A slice still running on Lambda may add its result later; a resume merges again.
      await mergeRun(o.runStore, o.evidence, tenant, runId);
    },
  };
}

/** The SFN client for `BROWSERFN_SFN_ENDPOINT` (a test's loopback server) or AWS's own endpoint. */
export function sfnClientFromEnv(env: NodeJS.ProcessEnv = process.env): SFNClient {
  const endpoint = env.BROWSERFN_SFN_ENDPOINT?.trim() || undefined;
  const region =
    env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim() || (endpoint ? 'us-east-1' : undefined);
  return new SFNClient({ ...(region ? { region } : {}), ...(endpoint ? { endpoint } : {}) });
}
