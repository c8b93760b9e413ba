/**
 * The runs API as the Lambda serves it on AWS (functions/api.ts with BROWSERFN_STATE_MACHINE_ARN set):
 * runs start, stop and resume as Step Functions executions, the run records live in DynamoDB and the
 * sample ids in S3 (dynalite + s3rver through the real SDK).
 *
 * There is no Step Functions emulator on this machine (no Docker, no StepFunctions Local jar), so the
 * real `@aws-sdk/client-sfn` client is pointed at a loopback HTTP server below that records each
 * JSON-protocol request (`X-Amz-Target: AWSStepFunctions.<Operation>`) and answers the way the service
 * documents: executionArn + startDate, DescribeExecution's status, `__type` errors. It stands in for
 * the service's front door only; what runs inside an execution is covered by the local state machine
 * tests (runs-local, runs-functions), which execute the same definition.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionArn, executionName } from '../../lib/api/runs-aws.ts';
import { storesFromEnv } from '../../lib/store/config.ts';
import { verifyRun } from '../../lib/store/manifest-store.ts';
import { type AwsLocal, startAwsLocal } from '../support/aws-local.ts';

const MACHINE = 'arn:aws:states:us-east-1:123456789012:stateMachine:browserfn-runs';

interface SfnCall {
  target: string;
  contentType: string;
  body: Record<string, string>;
}

interface Execution {
  executionArn: string;
  name: string;
  status: 'RUNNING' | 'ABORTED' | 'SUCCEEDED';
  input: string;
}

/** Records Step Functions JSON-protocol calls and answers them like the service would. */
async function startSfnRecorder() {
  const calls: SfnCall[] = [];
  const executions = new Map<string, Execution>();
  const state = { failNextStart: false };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, string>;
      calls.push({ target, contentType: String(req.headers['content-type'] ?? ''), body });
      const reply = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(JSON.stringify(json));
      };
      const error = (type: string, message: string) => reply(400, { __type: type, message });
      const now = Date.now() / 1000;
      switch (target) {
        case 'AWSStepFunctions.StartExecution': {
          if (state.failNextStart) {
            state.failNextStart = false;
            return error(
              'StateMachineDoesNotExist',
              `State Machine Does Not Exist: '${body.stateMachineArn}'`,
            );
          }
          const arn = `${body.stateMachineArn!.replace(':stateMachine:', ':execution:')}:${body.name}`;
          if (executions.has(arn))
            return error('ExecutionAlreadyExists', `Execution Already Exists: '${arn}'`);
          executions.set(arn, { executionArn: arn, name: body.name!, status: 'RUNNING', input: body.input! });
          return reply(200, { executionArn: arn, startDate: now });
        }
        case 'AWSStepFunctions.DescribeExecution': {
          const e = executions.get(body.executionArn!);
          if (!e) return error('ExecutionDoesNotExist', `Execution Does Not Exist: '${body.executionArn}'`);
          return reply(200, { ...e, stateMachineArn: MACHINE, startDate: now });
        }
        case 'AWSStepFunctions.StopExecution': {
          const e = executions.get(body.executionArn!);
          if (!e) return error('ExecutionDoesNotExist', `Execution Does Not Exist: '${body.executionArn}'`);
          e.status = 'ABORTED';
          return reply(200, { stopDate: now });
        }
        default:
          return error('UnknownOperationException', `not answered here: ${target}`);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, calls, executions, state, close: () => new Promise((r) => server.close(r)) };
}

let aws: AwsLocal;
let sfn: Awaited<ReturnType<typeof startSfnRecorder>>;
let app: { request: (path: string, init?: RequestInit) => Response | Promise<Response> };

beforeAll(async () => {
  [aws, sfn] = await Promise.all([startAwsLocal(['dynamo', 's3']), startSfnRecorder()]);
  // What the stack gives the API function (sst.config.ts), with the endpoints pointed at loopback.
  Object.assign(process.env, aws.env, {
    BROWSERFN_STATE_MACHINE_ARN: MACHINE,
    BROWSERFN_SFN_ENDPOINT: sfn.url,
    BROWSERFN_API_KEYS: 'key-acme:acme,key-other:other',
  });
  ({ app } = await import('../../functions/api.ts'));
});
afterAll(async () => {
  for (const k of ['BROWSERFN_STATE_MACHINE_ARN', 'BROWSERFN_SFN_ENDPOINT', 'BROWSERFN_API_KEYS'])
    delete process.env[k];
  for (const k of Object.keys(aws?.env ?? {})) delete process.env[k];
  await sfn?.close();
  await aws?.stop();
});

const call = async (key: string, method: string, path: string, body?: unknown) => {
  const res = await app.request(path, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
};

const START = {
  spec: { goal: 'the product name', concurrency: 2 },
  samples: [
    { sample_id: 'lamp', url: 'https://shop.example.test/lamp' },
    { sample_id: 'chair', url: 'https://shop.example.test/chair' },
  ],
};

describe('runs API on AWS: Step Functions executions', () => {
  let runId: string;

  it('POST /v1/runs starts an execution named by the run id, with the S3 items pointer as input', async () => {
    const res = await call('key-acme', 'POST', '/v1/runs', START);
    expect(res.status).toBe(202);
    runId = res.json.runId as string;
    const starts = sfn.calls.filter((c) => c.target === 'AWSStepFunctions.StartExecution');
    expect(starts).toHaveLength(1);
    expect(starts[0]!.contentType).toBe('application/x-amz-json-1.0');
    expect(starts[0]!.body.stateMachineArn).toBe(MACHINE);
    expect(starts[0]!.body.name).toBe(runId);
    const input = JSON.parse(starts[0]!.body.input!) as Record<string, unknown>;
    expect(input).toEqual({
      tenant: 'acme',
      runId,
      concurrency: 2,
      itemsBucket: aws.s3.bucket,
      itemsKey: `acme/_state/run_${runId}/items.json`,
      mapResultsPrefix: `acme/_state/run_${runId}/map-results`,
    });
    // The Distributed Map will read exactly these ids from the bucket.
    const items = await aws.s3.client.send(
      new GetObjectCommand({ Bucket: aws.s3.bucket, Key: input.itemsKey as string }),
    );
    expect(JSON.parse(await items.Body!.transformToString())).toEqual(['lamp', 'chair']);

    const status = await call('key-acme', 'GET', `/v1/runs/${runId}`);
    expect(status.json).toMatchObject({ runId, status: 'running' });
    const { runs } = storesFromEnv(aws.env);
    expect((await runs.getRun('acme', runId))?.status).toBe('running');
  });

  it('resume while the execution runs is a 409; another tenant cannot cancel it', async () => {
    const resume = await call('key-acme', 'POST', `/v1/runs/${runId}/resume`);
    expect(resume.status).toBe(409);
    const describe = sfn.calls.filter((c) => c.target === 'AWSStepFunctions.DescribeExecution').at(-1);
    expect(describe?.body.executionArn).toBe(
      `arn:aws:states:us-east-1:123456789012:execution:browserfn-runs:${runId}`,
    );
    const before = sfn.calls.length;
    expect((await call('key-other', 'POST', `/v1/runs/${runId}/cancel`)).status).toBe(404);
    expect(sfn.calls.length).toBe(before);
  });

  it('cancel stops the execution by its ARN and merges what was finished; resume starts the next one', async () => {
    const cancel = await call('key-acme', 'POST', `/v1/runs/${runId}/cancel`);
    expect(cancel).toEqual({ status: 202, json: { runId, status: 'cancelled' } });
    const stops = sfn.calls.filter((c) => c.target === 'AWSStepFunctions.StopExecution');
    expect(stops.map((c) => c.body.executionArn)).toEqual([executionArn(MACHINE, runId)]);
    expect(sfn.executions.get(executionArn(MACHINE, runId))?.status).toBe('ABORTED');

    const { runs, evidence } = storesFromEnv(aws.env);
    const run = await runs.getRun('acme', runId);
    expect(run?.status).toBe('cancelled');
    expect((run?.totals as { counts: Record<string, number> }).counts.pending).toBe(2);
    expect(await verifyRun(evidence, 'acme', runId, run?.manifestHead)).toMatchObject({ ok: true, files: 2 });

    const resume = await call('key-acme', 'POST', `/v1/runs/${runId}/resume`);
    expect(resume).toEqual({ status: 202, json: { runId, status: 'running' } });
    const start = sfn.calls.filter((c) => c.target === 'AWSStepFunctions.StartExecution').at(-1)!;
    expect(start.body.name).toBe(`${runId}-2`);
    expect(JSON.parse(start.body.input!)).toMatchObject({
      tenant: 'acme',
      runId,
      itemsKey: `acme/_state/run_${runId}/items.json`,
    });
    expect((await runs.getRun('acme', runId))?.status).toBe('running');
  });

  it('a resume racing another one finds its execution name taken: 409, and the run stays running', async () => {
    await call('key-acme', 'POST', `/v1/runs/${runId}/cancel`);
    // The other resume got there first: the third execution exists already.
    const third = executionArn(MACHINE, `${runId}-3`);
    sfn.executions.set(third, { executionArn: third, name: `${runId}-3`, status: 'RUNNING', input: '{}' });
    const resume = await call('key-acme', 'POST', `/v1/runs/${runId}/resume`);
    expect(resume).toEqual({
      status: 409,
      json: {
        error: { kind: 'conflict', message: `run ${runId} is already running (execution ${runId}-3)` },
        runId,
      },
    });
    const { runs } = storesFromEnv(aws.env);
    expect((await runs.getRun('acme', runId))?.status).toBe('running');
    // And a cancel now stops that execution, not the one before it.
    expect((await call('key-acme', 'POST', `/v1/runs/${runId}/cancel`)).status).toBe(202);
    expect(sfn.calls.filter((c) => c.target === 'AWSStepFunctions.StopExecution').at(-1)?.body).toEqual({
      executionArn: third,
      cause: 'cancelled by the caller',
    });
    expect(sfn.executions.get(third)?.status).toBe('ABORTED');
  });

  it('an execution that cannot start is a 503 naming why, and the run is marked failed', async () => {
    sfn.state.failNextStart = true;
    const res = await call('key-acme', 'POST', '/v1/runs', START);
    expect(res.status).toBe(503);
    expect(res.json.error).toEqual({
      kind: 'unavailable',
      message: `could not start the run's state machine: State Machine Does Not Exist: '${MACHINE}'`,
    });
    // The run that was created is named, and says why it failed.
    const failedId = res.json.runId as string;
    expect(failedId).not.toBe(runId);
    const status = await call('key-acme', 'GET', `/v1/runs/${failedId}`);
    expect(status.json).toMatchObject({
      status: 'failed',
      reason: `could not start the run's state machine: State Machine Does Not Exist: '${MACHINE}'`,
    });
  });

  it('execution names and ARNs come from the run id and the state machine ARN', () => {
    expect(executionName('20261123-190746-a1b2c3', 1)).toBe('20261123-190746-a1b2c3');
    expect(executionName('20261123-190746-a1b2c3', 3)).toBe('20261123-190746-a1b2c3-3');
    expect(() => executionName('a b', 1)).toThrow(/cannot name a Step Functions execution/);
    expect(executionArn(MACHINE, 'r1')).toBe(
      'arn:aws:states:us-east-1:123456789012:execution:browserfn-runs:r1',
    );
    expect(() => executionArn('arn:aws:lambda:us-east-1:123456789012:function:x', 'r1')).toThrow(
      /BROWSERFN_STATE_MACHINE_ARN must look like/,
    );
  });
});
