// Child process for the exit test: one API Gateway event through the Lambda handler, then shutdown.
// It must end by itself: anything left open (a socket, a timer) would keep it alive.
import type { LambdaEvent } from 'hono/aws-lambda';

type Event = Extract<LambdaEvent, { version: '2.0' }>;
const { handler, shutdown } = (await import('../../../functions/api.ts')) as unknown as {
  handler: (e: Event, c: unknown) => Promise<{ statusCode: number; body: string }>;
  shutdown: () => Promise<void>;
};

const url = process.argv[2]!;
const event = {
  version: '2.0',
  routeKey: '$default',
  rawPath: '/v1/observe',
  rawQueryString: '',
  headers: {
    host: 'fn.lambda-url.eu-west-1.on.aws',
    'content-type': 'application/json',
    authorization: 'Bearer k',
  },
  requestContext: {
    accountId: 'anonymous',
    apiId: 'fn',
    domainName: 'fn.lambda-url.eu-west-1.on.aws',
    domainPrefix: 'fn',
    http: {
      method: 'POST',
      path: '/v1/observe',
      protocol: 'HTTP/1.1',
      sourceIp: '127.0.0.1',
      userAgent: 'test',
    },
    requestId: 'r1',
    routeKey: '$default',
    stage: '$default',
    time: '23/Nov/2026:10:00:00 +0000',
    timeEpoch: Date.now(),
  },
  body: JSON.stringify({ url }),
  isBase64Encoded: false,
} as Event;

const res = await handler(event, {});
process.stdout.write(`status ${res.statusCode}\n`);
await shutdown();
process.stdout.write(`shut down ${Date.now()}\n`);
