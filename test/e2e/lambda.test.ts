import type { LambdaEvent } from 'hono/aws-lambda';

type APIGatewayProxyEventV2 = Extract<LambdaEvent, { version: '2.0' }>;

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { closeSharedBrowser } from '../../lib/browser/session.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';

let site: FixtureServer;
let handler: (
  event: APIGatewayProxyEventV2,
  context: unknown,
) => Promise<{ statusCode: number; body: string; headers?: Record<string, string> }>;

beforeAll(async () => {
  site = await startFixtureServer();
  process.env.BROWSERFN_API_KEYS = 'lambda-key:tenant-l';
  process.env.BROWSERFN_ALLOW_HOSTS = `127.0.0.1:${site.port}`;
  ({ handler } = (await import('../../functions/api.ts')) as unknown as { handler: typeof handler });
});
afterAll(async () => {
  await closeSharedBrowser();
  await closeGuardProxies();
  await site?.close();
  delete process.env.BROWSERFN_API_KEYS;
  delete process.env.BROWSERFN_ALLOW_HOSTS;
});

function event(
  kind: 'apigw' | 'furl',
  method: string,
  path: string,
  body?: unknown,
  key?: string,
): APIGatewayProxyEventV2 {
  const domainName =
    kind === 'apigw' ? 'abc123.execute-api.eu-west-1.amazonaws.com' : 'xyz789.lambda-url.eu-west-1.on.aws';
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: {
      host: domainName,
      'content-type': 'application/json',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
    },
    requestContext: {
      accountId: kind === 'apigw' ? '123456789012' : 'anonymous',
      apiId: kind === 'apigw' ? 'abc123' : 'xyz789',
      domainName,
      domainPrefix: domainName.split('.')[0]!,
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.9', userAgent: 'vitest' },
      requestId: `req-${Math.random()}`,
      routeKey: '$default',
      stage: '$default',
      time: '23/Nov/2026:10:00:00 +0000',
      timeEpoch: Date.now(),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    isBase64Encoded: false,
  } as APIGatewayProxyEventV2;
}

describe.each(['apigw', 'furl'] as const)('Lambda handler with %s events', (kind) => {
  it('answers health, auth and validation', async () => {
    const health = await handler(event(kind, 'GET', '/healthz'), {});
    expect(health.statusCode).toBe(200);
    expect(JSON.parse(health.body)).toEqual({ ok: true });
    const noKey = await handler(
      event(kind, 'POST', '/v1/act', { url: `${site.url}/login.html`, instruction: 'x' }),
      {},
    );
    expect(noKey.statusCode).toBe(401);
    const bad = await handler(event(kind, 'POST', '/v1/act', { url: 'nope' }, 'lambda-key'), {});
    expect(bad.statusCode).toBe(400);
    expect(JSON.parse(bad.body).error.issues[0].path).toBe('url');
  });

  it('runs an act end to end in the embedded browser', async () => {
    const res = await handler(
      event(
        kind,
        'POST',
        '/v1/act',
        { url: `${site.url}/login.html`, instruction: 'check remember me' },
        'lambda-key',
      ),
      {},
    );
    expect(res.statusCode).toBe(200);
    const json = JSON.parse(res.body);
    expect(json.success).toBe(true);
    expect(json.message).toContain('checked');
    expect(json.usage.promptTokens).toBe(0);
  });
});
