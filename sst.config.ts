/// <reference path="./.sst/platform/config.d.ts" />

/**
 * browserfn on AWS: the API (Function URL), the run functions, one DynamoDB table, the evidence bucket,
 * the job queue with its DLQ, and the runs state machine. Every choice (sizes, grants, the ASL) comes
 * from infra/stack.ts and infra/state-machine.ts, which are plain functions with tests.
 */
export default $config({
  app(input) {
    return {
      name: 'browserfn',
      removal: input?.stage === 'production' ? 'retain' : 'remove',
      home: 'aws',
    };
  },
  async run() {
    const { FUNCTIONS, QUEUE, grantsFor, stateMachineGrants } = await import('./infra/stack.ts');
    const { awsStateMachine } = await import('./infra/aws-state-machine.ts');

    const table = new sst.aws.Dynamo('Runs', {
      fields: { pk: 'string', sk: 'string' },
      primaryIndex: { hashKey: 'pk', rangeKey: 'sk' },
    });
    const bucket = new sst.aws.Bucket('Evidence', {
      lifecycle: [{ id: 'expire-evidence', expiresIn: `${QUEUE.evidenceRetentionDays} days` }],
    });
    const dlq = new sst.aws.Queue('JobsDlq');
    const output = new sst.aws.Queue('Results');
    const jobs = new sst.aws.Queue('Jobs', {
      visibilityTimeout: `${QUEUE.visibilityTimeoutSeconds} seconds`,
      dlq: { queue: dlq.arn, retry: QUEUE.maxReceiveCount },
    });

    const region = aws.getRegionOutput().name;
    const account = aws.getCallerIdentityOutput().accountId;
    const stateMachineName = `${$app.name}-${$app.stage}-runs`;
    const stateMachineArn = $interpolate`arn:aws:states:${region}:${account}:stateMachine:${stateMachineName}`;

    const baseEnv = {
      BROWSERFN_TABLE: table.name,
      BROWSERFN_BUCKET: bucket.name,
      BROWSERFN_STATE_MACHINE_ARN: stateMachineArn,
      BROWSERFN_DLQ_URL: dlq.url,
      BROWSERFN_OUTPUT_QUEUE_URL: output.url,
      BROWSERFN_QUEUE_URL: jobs.url,
      BROWSERFN_MODEL: process.env.BROWSERFN_MODEL ?? '',
      BROWSERFN_API_KEYS: process.env.BROWSERFN_API_KEYS ?? '',
    };

    type Name = keyof typeof FUNCTIONS;
    const make = (name: Name, extra: Record<string, unknown> = {}) => {
      const spec = FUNCTIONS[name];
      return new sst.aws.Function(`Fn${name[0]!.toUpperCase()}${name.slice(1)}`, {
        handler: spec.handler,
        runtime: 'nodejs22.x',
        memory: `${spec.memoryMb} MB`,
        timeout: `${spec.timeoutSeconds} seconds`,
        environment: { ...baseEnv, ...spec.environment },
        ...(spec.browser ? { nodejs: { install: ['@sparticuz/chromium'] } } : {}),
        ...extra,
      });
    };
    const fns = {
      api: make('api', { url: true }),
      plan: make('plan'),
      agentSlice: make('agentSlice'),
      discover: make('discover'),
      merge: make('merge'),
      queue: make('queue'),
    };
    const stackResources = $resolve({
      tableArn: table.arn,
      bucketArn: bucket.arn,
      dlqArn: dlq.arn,
      outputQueueArn: output.arn,
      jobsQueueArn: jobs.arn,
      stateMachineArn,
      functionArns: $resolve({
        api: fns.api.arn,
        plan: fns.plan.arn,
        agentSlice: fns.agentSlice.arn,
        discover: fns.discover.arn,
        merge: fns.merge.arn,
        queue: fns.queue.arn,
      }),
    });
    const policyDocument = (grants: { actions: string[]; resources: string[] }[]) =>
      JSON.stringify({
        Version: '2012-10-17',
        Statement: grants.map((g) => ({ Effect: 'Allow', Action: g.actions, Resource: g.resources })),
      });

    // Least privilege: each function's role gets exactly the grants infra/stack.ts lists for it.
    for (const name of Object.keys(fns) as Name[]) {
      new aws.iam.RolePolicy(`Grants${name}`, {
        role: fns[name].nodes.role.name,
        policy: stackResources.apply((r) => policyDocument(grantsFor(name, r))),
      });
    }

    jobs.subscribe(fns.queue.arn, { batch: { size: QUEUE.batchSize, partialResponses: true } });

    const role = new aws.iam.Role('RunsStateMachineRole', {
      assumeRolePolicy: JSON.stringify({
        Version: '2012-10-17',
        Statement: [
          { Effect: 'Allow', Principal: { Service: 'states.amazonaws.com' }, Action: 'sts:AssumeRole' },
        ],
      }),
    });
    new aws.iam.RolePolicy('RunsStateMachineGrants', {
      role: role.name,
      policy: stackResources.apply((r) => policyDocument(stateMachineGrants(r))),
    });
    const machine = new aws.sfn.StateMachine('RunsStateMachine', {
      name: stateMachineName,
      type: 'STANDARD',
      roleArn: role.arn,
      definition: stackResources.apply((r) => JSON.stringify(awsStateMachine(r.functionArns))),
    });

    return {
      api: fns.api.url,
      table: table.name,
      bucket: bucket.name,
      queue: jobs.url,
      dlq: dlq.url,
      stateMachine: machine.arn,
    };
  },
});
