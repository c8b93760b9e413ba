/**
 * The deployable stack as data: which functions exist, how big they are, what each may touch, and the
 * state machine they serve. `sst.config.ts` only turns this into SST components, so the choices here
 * are plain values a unit test can read (least privilege, sizes, the exact ASL that is deployed).
 */

/** ARNs and names of the resources the stack creates, as SST resolves them. */
export interface StackResources {
  tableArn: string;
  bucketArn: string;
  dlqArn: string;
  outputQueueArn: string;
  /** The job queue the consumer reads, and sends a job it ran out of time for back to. */
  jobsQueueArn: string;
  stateMachineArn: string;
  functionArns: Record<FunctionName, string>;
}

export type FunctionName = 'api' | 'plan' | 'agentSlice' | 'discover' | 'merge' | 'queue';

export interface Grant {
  actions: string[];
  resources: string[];
}

export interface FunctionSpec {
  handler: string;
  /** MB. Chromium wants ≥ 1.5 GB; Lambda gives CPU in proportion to memory, so browsers get 2 GB. */
  memoryMb: number;
  timeoutSeconds: number;
  /** Ships the Chromium binary (`@sparticuz/chromium` installed beside the bundle, not bundled). */
  browser: boolean;
  environment: Record<string, string>;
}

const TABLE_READ = ['dynamodb:GetItem', 'dynamodb:Query'];
const TABLE_WRITE = ['dynamodb:PutItem', 'dynamodb:UpdateItem'];
const OBJECT_READ = ['s3:GetObject'];
const OBJECT_WRITE = ['s3:PutObject'];

/**
 * Slices stop this long before the Lambda timeout: enough to save a checkpoint and close the browser.
 * 900 s is Lambda's ceiling; a 12-minute slice leaves 3 minutes of margin.
 */
export const SLICE_MARGIN_SECONDS = 180;
/** The queue consumer's 5-minute timeout leaves a one-minute margin after a sample's slice. */
export const QUEUE_SLICE_MARGIN_SECONDS = 60;

export const FUNCTIONS: Record<FunctionName, FunctionSpec> = {
  // Function URL only: API Gateway cuts integrations at 30 s, and agent calls take longer.
  api: {
    handler: 'functions/api.handler',
    memoryMb: 2048,
    timeoutSeconds: 300,
    browser: true,
    // Each instance serves one call at a time: the per-key limit that holds across instances is a
    // rate kept in DynamoDB (2 calls a second, bursts of 4, per API key).
    environment: { BROWSERFN_CALLS_PER_SECOND_PER_KEY: '2' },
  },
  // No browser: one model call that turns a prompt into a task spec and samples.
  plan: {
    handler: 'functions/plan.handler',
    memoryMb: 1024,
    timeoutSeconds: 300,
    browser: false,
    environment: {},
  },
  agentSlice: {
    handler: 'functions/agent-slice.handler',
    memoryMb: 2048,
    timeoutSeconds: 900,
    browser: true,
    environment: { BROWSERFN_SLICE_MS: String((900 - SLICE_MARGIN_SECONDS) * 1000) },
  },
  discover: {
    handler: 'functions/discover.handler',
    memoryMb: 2048,
    timeoutSeconds: 900,
    browser: true,
    environment: {},
  },
  // No browser: reads results, writes CSV, report and manifest.
  merge: {
    handler: 'functions/merge.handler',
    memoryMb: 1024,
    timeoutSeconds: 300,
    browser: false,
    environment: {},
  },
  // Each sample of a message runs as one slice: it must end inside this function's timeout.
  queue: {
    handler: 'functions/queue.handler',
    memoryMb: 2048,
    timeoutSeconds: 300,
    browser: true,
    environment: { BROWSERFN_SLICE_MS: String((300 - QUEUE_SLICE_MARGIN_SECONDS) * 1000) },
  },
};

/** SQS settings: visibility must outlast a whole batch's work, or messages are handed out twice. */
export const QUEUE = {
  batchSize: 5,
  visibilityTimeoutSeconds: FUNCTIONS.queue.timeoutSeconds * 6,
  maxReceiveCount: 3,
  /** Evidence older than this is deleted by the bucket's lifecycle rule. */
  evidenceRetentionDays: 30,
};

/** What each function may do, and on what: only the calls its code makes. */
export function grantsFor(name: FunctionName, r: StackResources): Grant[] {
  const table = [r.tableArn];
  const objects = [`${r.bucketArn}/*`];
  switch (name) {
    case 'api':
      return [
        { actions: [...TABLE_READ, ...TABLE_WRITE], resources: table },
        { actions: [...OBJECT_READ, ...OBJECT_WRITE], resources: objects },
        { actions: ['s3:ListBucket'], resources: [r.bucketArn] },
        // POST /v1/runs (and resume) starts an execution; resume and cancel ask whether it still
        // runs (lib/api/runs-aws.ts), cancel stops it.
        { actions: ['states:StartExecution'], resources: [r.stateMachineArn] },
        {
          actions: ['states:DescribeExecution', 'states:StopExecution'],
          resources: [executionArns(r.stateMachineArn)],
        },
      ];
    case 'plan':
      return [
        { actions: [...TABLE_READ, ...TABLE_WRITE], resources: table },
        // generated_task_spec.json and, on AWS, the Map's items.json.
        { actions: OBJECT_WRITE, resources: objects },
      ];
    case 'agentSlice':
      return [
        { actions: [...TABLE_READ, ...TABLE_WRITE], resources: table },
        { actions: [...OBJECT_READ, ...OBJECT_WRITE], resources: objects },
      ];
    case 'discover':
      return [
        { actions: [...TABLE_READ, ...TABLE_WRITE], resources: table },
        // Reads a planned run's generated spec; writes the item source and the Map's items.json.
        { actions: [...OBJECT_READ, ...OBJECT_WRITE], resources: objects },
      ];
    case 'merge':
      return [
        { actions: [...TABLE_READ, 'dynamodb:UpdateItem'], resources: table },
        { actions: [...OBJECT_READ, ...OBJECT_WRITE], resources: objects },
        { actions: ['s3:ListBucket'], resources: [r.bucketArn] },
      ];
    case 'queue':
      return [
        { actions: [...TABLE_READ, ...TABLE_WRITE], resources: table },
        { actions: [...OBJECT_READ, ...OBJECT_WRITE], resources: objects },
        // Receive/Delete on the source queue come with the subscription; we send onwards, and a
        // job the invocation's time could not finish back onto its own queue.
        { actions: ['sqs:SendMessage'], resources: [r.dlqArn, r.outputQueueArn, r.jobsQueueArn] },
      ];
  }
}

/** Executions of a state machine: `arn:…:stateMachine:NAME` → `arn:…:execution:NAME:*`. */
export function executionArns(stateMachineArn: string): string {
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:*`;
}

/** The functions the run state machine's Task states call. */
export const STATE_MACHINE_FUNCTIONS: FunctionName[] = ['plan', 'discover', 'agentSlice', 'merge'];

/** The state machine's own role: invoke the run's functions, read the item list, run its child Map. */
export function stateMachineGrants(r: StackResources): Grant[] {
  const invoked: FunctionName[] = STATE_MACHINE_FUNCTIONS;
  return [
    { actions: ['lambda:InvokeFunction'], resources: invoked.map((f) => r.functionArns[f]) },
    { actions: ['s3:GetObject'], resources: [`${r.bucketArn}/*`] },
    { actions: ['s3:PutObject'], resources: [`${r.bucketArn}/*`] },
    // A Distributed Map runs its iterations as child executions of the same state machine.
    { actions: ['states:StartExecution'], resources: [r.stateMachineArn] },
    {
      actions: ['states:DescribeExecution', 'states:StopExecution'],
      resources: [executionArns(r.stateMachineArn)],
    },
  ];
}
