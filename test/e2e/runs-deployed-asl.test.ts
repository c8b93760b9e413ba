import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awsStateMachine } from '../../infra/aws-state-machine.ts';
import type { FunctionName } from '../../infra/stack.ts';
import { STATE } from '../../infra/state-machine.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { closeSharedBrowser } from '../../lib/browser/session.ts';
import { createRun, itemsInBucket } from '../../lib/runs/run-records.ts';
import { parseTaskSpec } from '../../lib/runs/task-spec.ts';
import { storesFromEnv } from '../../lib/store/config.ts';
import { type AwsLocal, startAwsLocal } from '../support/aws-local.ts';
import { runDeployed } from '../support/deployed-asl.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { finishWith, headingIn, titleModel } from '../support/runs-env.ts';

/**
 * The definition deployed to AWS (Distributed Map, ItemReader and ResultWriter on S3), executed end to
 * end with its task states bound to the Lambda entry modules in functions/, called as the Lambda
 * runtime calls them (event, context), on DynamoDB + S3 emulators. test/support/deployed-asl.ts says
 * what its shim stands in for.
 */

/** The Lambda runtime's context object (the fields Node's runtime passes; aws-lambda's types are not installed). */
interface Context {
  callbackWaitsForEmptyEventLoop: boolean;
  functionName: string;
  functionVersion: string;
  invokedFunctionArn: string;
  memoryLimitInMB: string;
  awsRequestId: string;
  logGroupName: string;
  logStreamName: string;
  getRemainingTimeInMillis(): number;
  done(): void;
  fail(): void;
  succeed(): void;
}

let site: FixtureServer;
let llm: ScriptedModel;
let aws: AwsLocal;
type LambdaHandler = (event: unknown, context: Context) => Promise<unknown>;
let tasks: Record<string, (event: unknown) => Promise<unknown>>;
const invoked: string[] = [];
let inTurn: Promise<unknown> = Promise.resolve();

/** What the Lambda runtime passes besides the event (the handlers read none of it, but get it). */
function lambdaContext(name: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: `browserfn-${name}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: arns[name as FunctionName],
    memoryLimitInMB: '2048',
    awsRequestId: crypto.randomUUID(),
    logGroupName: `/aws/lambda/browserfn-${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 600_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

const arns = Object.fromEntries(
  (['api', 'plan', 'agentSlice', 'discover', 'merge', 'queue'] as FunctionName[]).map((n) => [
    n,
    `arn:aws:lambda:us-east-1:123456789012:function:browserfn-${n}`,
  ]),
) as Record<FunctionName, string>;

beforeAll(async () => {
  [site, llm, aws] = await Promise.all([
    startFixtureServer(),
    startScriptedModel(),
    startAwsLocal(['dynamo', 's3']),
  ]);
  // The Lambdas' configuration (infra/stack.ts): table and bucket, here on dynalite and s3rver.
  Object.assign(process.env, {
    ...aws.env,
    BROWSERFN_ALLOW_HOSTS: `127.0.0.1:${site.port}`,
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: llm.openaiBaseURL,
    BROWSERFN_MODEL: 'openai/gpt-4.1-mini',
  });
  const lambda = async (name: FunctionName, file: string) => {
    const { handler } = (await import(`../../functions/${file}.ts`)) as { handler: LambdaHandler };
    return (event: unknown) => {
      invoked.push(name);
      // A Lambda container runs one invocation at a time (each sets TMPDIR to its own folder, a
      // process-wide variable): this process stands in for the containers, so it takes them in turn.
      const call = inTurn.then(() => handler(event, lambdaContext(name)));
      inTurn = call.catch(() => undefined);
      return call;
    };
  };
  const slice = await lambda('agentSlice', 'agent-slice');
  tasks = {
    [STATE.plan]: await lambda('plan', 'plan'),
    [STATE.discover]: await lambda('discover', 'discover'),
    [STATE.slice]: slice,
    [STATE.crash]: slice,
    [STATE.judge]: slice,
    [STATE.merge]: await lambda('merge', 'merge'),
  };
});
afterAll(async () => {
  await closeSharedBrowser();
  await closeGuardProxies();
  await site?.close();
  await llm?.close();
  await aws?.stop();
});

const stores = () => storesFromEnv(aws.env);

/** The Map's result files the shim's ResultWriter left under the input's prefix, item by item. */
async function mapResults(prefix: string): Promise<{ Input: string; Output: string; Status: string }[]> {
  const listed = await aws.s3.client.send(
    new ListObjectsV2Command({ Bucket: aws.s3.bucket, Prefix: prefix }),
  );
  const key = listed.Contents?.map((o) => o.Key!).find((k) => k.endsWith('/SUCCEEDED_0.json'));
  if (!key) return [];
  const got = await aws.s3.client.send(new GetObjectCommand({ Bucket: aws.s3.bucket, Key: key }));
  return JSON.parse(await got.Body!.transformToString());
}

describe('the deployed state machine (aws variant)', () => {
  it('reads the sample ids from S3, runs each sample, writes the Map results to S3 and merges', async () => {
    const { runs, evidence } = stores();
    const spec = parseTaskSpec({
      goal: 'product name',
      outputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
      concurrency: 2,
    });
    titleModel(llm);
    const input = await createRun(
      runs,
      evidence,
      {
        tenant: 'deployed',
        spec,
        samples: [
          { sampleId: 'bell', url: `${site.url}/products/brass-bell.html`, input: {} },
          { sampleId: 'pan', url: `${site.url}/products/iron-pan.html`, input: {} },
          { sampleId: 'kettle', url: `${site.url}/products/steel-kettle.html`, input: {} },
        ],
      },
      itemsInBucket(aws.s3.bucket),
    );
    // The ids travel through S3, not in the execution input.
    expect(input.items).toBeUndefined();
    expect(input.itemsKey).toMatch(/items\.json$/);

    const out = (await runDeployed(awsStateMachine(arns), { ...input }, tasks, aws.s3.client)) as {
      counts: Record<string, number>;
    };
    expect(out.counts).toMatchObject({ done: 3, failed: 0 });
    const results = await runs.listResults('deployed', input.runId);
    expect(results.map((r) => [r.sampleId, r.status, r.data])).toEqual([
      ['bell', 'done', { title: 'Brass Bell' }],
      ['kettle', 'done', { title: 'Steel Kettle' }],
      ['pan', 'done', { title: 'Iron Pan' }],
    ]);
    expect((await runs.getRun('deployed', input.runId))?.status).toBe('done');
    // The ResultWriter's files: one entry per item read, each the sample loop's end.
    const written = await mapResults(input.mapResultsPrefix!);
    expect(written.map((w) => JSON.parse(w.Input))).toEqual(['bell', 'pan', 'kettle']);
    expect(written.every((w) => w.Status === 'SUCCEEDED')).toBe(true);
  }, 300_000);

  it('Plan (functions/plan.ts) writes the planned ids to S3, where the Map reads them', async () => {
    const { runs, evidence } = stores();
    llm.setHandler((req) =>
      req.schemaName === 'run_plan'
        ? {
            json: {
              goal: 'read the product name',
              fields: [{ name: 'title', type: 'string', description: 'product name' }],
              requiredFields: ['title'],
              keywords: ['product'],
              maxSteps: 3,
              expectedItems: null,
              samples: [
                { sample_id: 'lamp', url: `${site.url}/products/red-lamp.html` },
                { sample_id: 'mug', url: `${site.url}/products/tall-mug.html` },
              ],
            },
          }
        : finishWith({ title: headingIn(req) ?? null }, req),
    );
    const input = await createRun(runs, evidence, {
      tenant: 'deployed',
      prompt: 'Get the product names of the red lamp and the tall mug pages',
      concurrency: 2,
    });
    invoked.length = 0;
    await runDeployed(awsStateMachine(arns), { ...input }, tasks, aws.s3.client);
    expect(invoked[0]).toBe('plan');
    expect(invoked).not.toContain('discover');
    const results = await runs.listResults('deployed', input.runId);
    expect(results.map((r) => [r.sampleId, r.status, r.data])).toEqual([
      ['lamp', 'done', { title: 'Red Lamp' }],
      ['mug', 'done', { title: 'Tall Mug' }],
    ]);
    const listed = await aws.s3.client.send(
      new ListObjectsV2Command({ Bucket: aws.s3.bucket, Prefix: `deployed/_state/run_${input.runId}/` }),
    );
    const itemsKey = listed.Contents?.map((o) => o.Key!).find((k) => k.endsWith('/items.json'));
    const got = await aws.s3.client.send(new GetObjectCommand({ Bucket: aws.s3.bucket, Key: itemsKey! }));
    expect(JSON.parse(await got.Body!.transformToString())).toEqual(['lamp', 'mug']);
  }, 300_000);

  it('Discover (functions/discover.ts) reads the listing and the Map fans out over what it found', async () => {
    const { runs, evidence } = stores();
    titleModel(llm);
    const spec = parseTaskSpec({
      goal: 'the product name shown as the page title',
      outputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
      concurrency: 2,
      discovery: { listings: [`${site.url}/listing.html?pages=2&per=2`], include: '*/products/item-*' },
    });
    const input = await createRun(runs, evidence, { tenant: 'deployed', spec, samples: [] });
    invoked.length = 0;
    const out = (await runDeployed(awsStateMachine(arns), { ...input }, tasks, aws.s3.client)) as {
      counts: Record<string, number>;
    };
    expect(invoked[0]).toBe('discover');
    const samples = await runs.listSamples('deployed', input.runId);
    // 2 pages of 2 items.
    expect(samples.map((s) => s.url)).toEqual([1, 2, 3, 4].map((i) => `${site.url}/products/item-${i}.html`));
    expect(out.counts).toMatchObject({ done: 4, failed: 0 });
    const results = await runs.listResults('deployed', input.runId);
    expect(results.map((r) => r.data)).toEqual([1, 2, 3, 4].map((i) => ({ title: `Item ${i}` })));
  }, 300_000);
});
