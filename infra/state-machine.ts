/**
 * The run state machine as Amazon States Language (JSONPath), built by one pure function so AWS Step
 * Functions and the local runner (aws-local-stepfunctions) execute the same states; only the Samples
 * Map differs (Distributed over S3 on AWS, inline locally: that engine has no ItemReader/ResultWriter;
 * test/support/deployed-asl.ts runs the `aws` variant through a shim for those two).
 *
 *   Plan? ─(prompt given)→ Plan ─┐
 *     └──────────────────────────┴→ Discover? ─(discovery given)→ Discover ─┐
 *                                     └────────────────────────────────────┴→ Samples (Map over sample ids)
 *                                      Slice ─→ Sample ended? ─(no)→ Slice …
 *                                        │ crash            ├(yes, judge)→ Judge → Sample done
 *                                        │                  └(yes)→ Sample done
 *                                        └→ Record crash ─────────→ Sample done
 *                                   → Merge
 *
 * Payloads stay small: the execution input is `{ tenant, runId, concurrency, items | itemsKey }` (plus
 * `prompt` or `discovery: true` when the samples are still to be planned or discovered) and a
 * sample's loop carries only its ids; the agent's state lives in the RunStore checkpoint.
 */

export type StateMachineMode = 'aws' | 'local';

export interface StateMachineOptions {
  mode: StateMachineMode;
  /** Lambda ARNs of the task states (the local runner binds handlers by state name instead). */
  functions: { plan: string; slice: string; merge: string; discover: string };
  /** Per-slice time limit; the slice handler stops its agent well before it (default 600 s). */
  sliceTimeoutSeconds?: number;
  /** Samples whose whole loop may fail (even recording the crash) before the run fails (default 5 %). */
  toleratedFailurePercentage?: number;
  /** The Map's largest concurrency when the input gives none (default 4). */
  defaultConcurrency?: number;
}

export type Asl = Record<string, unknown>;

/** Names the local runner binds its handlers to; they are part of the contract, not decoration. */
export const STATE = {
  planChoice: 'Plan?',
  plan: 'Plan',
  discoverChoice: 'Discover?',
  discover: 'Discover',
  samples: 'Samples',
  slice: 'Slice',
  ended: 'Sample ended?',
  judge: 'Judge',
  crash: 'Record crash',
  sampleDone: 'Sample done',
  merge: 'Merge',
} as const;

/** Transient failures of Lambda or the service itself: worth another try with backoff. */
export const SERVICE_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
  'Lambda.ClientExecutionTimeoutException',
];

const serviceRetry = (maxAttempts: number) => ({
  ErrorEquals: SERVICE_ERRORS,
  IntervalSeconds: 2,
  MaxAttempts: maxAttempts,
  BackoffRate: 2,
  MaxDelaySeconds: 60,
  JitterStrategy: 'FULL',
});

const ids = { 'tenant.$': '$.tenant', 'runId.$': '$.runId', 'sampleId.$': '$.sampleId' };

function sampleLoop(o: StateMachineOptions, sliceTimeout: number): Asl {
  return {
    StartAt: STATE.slice,
    States: {
      [STATE.slice]: {
        Type: 'Task',
        Comment:
          'One slice of the agent loop: load the checkpoint, work until done or near the deadline, save.',
        Resource: o.functions.slice,
        Parameters: ids,
        TimeoutSeconds: sliceTimeout,
        ResultPath: '$.slice',
        // A timed-out slice resumes from its last checkpoint on the next try.
        Retry: [serviceRetry(6), { ErrorEquals: ['States.Timeout'], IntervalSeconds: 1, MaxAttempts: 2 }],
        // Anything else is a crash of this sample only: it becomes a `failed` result, the run goes on.
        Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: STATE.crash }],
        Next: STATE.ended,
      },
      [STATE.ended]: {
        Type: 'Choice',
        Choices: [
          {
            // The spec asked for the judge: its verdict is part of the sample's end.
            And: [
              { Variable: '$.slice.final', BooleanEquals: true },
              { Variable: '$.slice.judge', IsPresent: true },
              { Variable: '$.slice.judge', BooleanEquals: true },
            ],
            Next: STATE.judge,
          },
          { Variable: '$.slice.final', BooleanEquals: true, Next: STATE.sampleDone },
        ],
        Default: STATE.slice,
      },
      [STATE.judge]: {
        Type: 'Task',
        Comment:
          "The judge rules on the finished sample from its evidence; a judge that fails leaves the sample's result as it is.",
        Resource: o.functions.slice,
        Parameters: { ...ids, judge: true },
        TimeoutSeconds: 300,
        ResultPath: null,
        Retry: [serviceRetry(6)],
        Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.judgeError', Next: STATE.sampleDone }],
        Next: STATE.sampleDone,
      },
      [STATE.crash]: {
        Type: 'Task',
        Comment: 'Writes the crashed sample a failed result (once; an earlier result is kept).',
        Resource: o.functions.slice,
        Parameters: { ...ids, 'crash.$': '$.error' },
        TimeoutSeconds: 60,
        ResultPath: null,
        Retry: [serviceRetry(6), { ErrorEquals: ['States.ALL'], IntervalSeconds: 1, MaxAttempts: 2 }],
        Next: STATE.sampleDone,
      },
      [STATE.sampleDone]: { Type: 'Succeed' },
    },
  };
}

function samplesMap(o: StateMachineOptions, sliceTimeout: number): Asl {
  const loop = sampleLoop(o, sliceTimeout);
  const common = {
    Type: 'Map',
    ItemSelector: { 'tenant.$': '$.tenant', 'runId.$': '$.runId', 'sampleId.$': '$$.Map.Item.Value' },
    MaxConcurrencyPath: '$.concurrency',
    // Results live in the RunStore; the Map's own output would only grow the payload.
    ResultPath: null,
    Next: STATE.merge,
  };
  if (o.mode === 'local') {
    return {
      ...common,
      ItemsPath: '$.items',
      ItemProcessor: { ProcessorConfig: { Mode: 'INLINE' }, ...loop },
    };
  }
  return {
    ...common,
    // Thousands of sample ids do not fit a 256 KB payload: the Distributed Map reads them from S3.
    ItemReader: {
      Resource: 'arn:aws:states:::s3:getObject',
      ReaderConfig: { InputType: 'JSON' },
      Parameters: { 'Bucket.$': '$.itemsBucket', 'Key.$': '$.itemsKey' },
    },
    ItemProcessor: { ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' }, ...loop },
    ToleratedFailurePercentage: o.toleratedFailurePercentage ?? 5,
    ResultWriter: {
      Resource: 'arn:aws:states:::s3:putObject',
      Parameters: { 'Bucket.$': '$.itemsBucket', 'Prefix.$': '$.mapResultsPrefix' },
    },
  };
}

/** The run state machine for AWS (Distributed Map over S3) or for the local runner (inline Map). */
export function runStateMachine(o: StateMachineOptions): Asl {
  const sliceTimeout = o.sliceTimeoutSeconds ?? 600;
  return {
    Comment: `browserfn run (${o.mode}): plan?, discover?, then every sample's agent loop in slices, then merge`,
    StartAt: STATE.planChoice,
    States: {
      [STATE.planChoice]: {
        Type: 'Choice',
        Choices: [{ Variable: '$.prompt', IsPresent: true, Next: STATE.plan }],
        Default: STATE.discoverChoice,
      },
      [STATE.plan]: {
        Type: 'Task',
        Comment: 'One model call: prompt → task spec + samples (saved as generated_task_spec.json).',
        Resource: o.functions.plan,
        TimeoutSeconds: 300,
        // No ResultPath: the plan's output (ids, concurrency, items or their S3 key) replaces the input.
        // (An explicit "$" means the same in ASL, but aws-local-stepfunctions 3 mishandles it.)
        Retry: [serviceRetry(4)],
        Next: STATE.discoverChoice,
      },
      [STATE.discoverChoice]: {
        Type: 'Choice',
        Choices: [{ Variable: '$.discovery', IsPresent: true, Next: STATE.discover }],
        Default: STATE.samples,
      },
      [STATE.discover]: {
        Type: 'Task',
        Comment:
          'Listing pages → sample URLs, stored as the item source and the run samples; returns their ids or S3 key.',
        Resource: o.functions.discover,
        Parameters: { 'tenant.$': '$.tenant', 'runId.$': '$.runId', 'concurrency.$': '$.concurrency' },
        TimeoutSeconds: 900,
        // Like Plan, the output (the Map's input) replaces the state's input.
        Retry: [serviceRetry(4)],
        Next: STATE.samples,
      },
      [STATE.samples]: samplesMap(o, sliceTimeout),
      [STATE.merge]: {
        Type: 'Task',
        Comment: 'combined.csv, results.json, totals and the manifest head on the run.',
        Resource: o.functions.merge,
        Parameters: { 'tenant.$': '$.tenant', 'runId.$': '$.runId' },
        TimeoutSeconds: 900,
        Retry: [serviceRetry(6)],
        End: true,
      },
    },
  };
}

/** ARNs that only name the handler; the local runner never calls Lambda. */
export const LOCAL_FUNCTIONS = {
  plan: 'arn:aws:lambda:us-east-1:000000000000:function:browserfn-plan',
  slice: 'arn:aws:lambda:us-east-1:000000000000:function:browserfn-agent-slice',
  merge: 'arn:aws:lambda:us-east-1:000000000000:function:browserfn-merge',
  discover: 'arn:aws:lambda:us-east-1:000000000000:function:browserfn-discover',
};
