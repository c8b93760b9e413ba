/**
 * /openapi.json lists every operation with the answers it really gives (issue 28 item 7): the app is
 * built in-process with every optional API mounted (no browser is opened: documenting needs none).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../lib/api/app.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import { LocalWorkflowStore } from '../../lib/store/local-workflow-store.ts';

type Operation = { security?: unknown[]; responses: Record<string, { description?: string }> };
type Doc = {
  info: { description?: string };
  paths: Record<string, Record<string, Operation>>;
};

/** The calls that open a page or ask a model under the request deadline (app.ts PAGE_CALLS). */
const UNDER_DEADLINE = [
  'post /v1/act',
  'post /v1/observe',
  'post /v1/extract',
  'post /v1/agent',
  'post /v1/scenarios',
  'post /v1/workflows/plan',
  'post /v1/workflows/compile',
  'post /v1/workflows/{id}/run',
];

describe('the OpenAPI document', () => {
  it('lists every operation with 401 / 429 / 504 where they happen, no 202 on a GET, a description on every answer', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bfn-openapi-'));
    const app = createApp({
      keys: new Map([['key-a', 'tenant-a']]),
      policy: { allowPrivate: false, allowHosts: [] },
      browser: async () => {
        throw new Error('documenting the routes opens no browser');
      },
      runs: {
        runStore: new LocalRunStore(join(dir, 'runs')),
        evidence: new LocalEvidenceStore(join(dir, 'evidence')),
        launch: async () => undefined,
      },
      workflows: new LocalWorkflowStore(join(dir, 'workflows')),
    });
    const res = await app.request('/openapi.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Doc;

    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ name: `${method} ${path}`, path, method, op })),
    );
    const names = operations.map((o) => o.name);
    // The routes the app serves are all there, /healthz and the run judge included.
    expect(names).toEqual(
      expect.arrayContaining([
        'get /healthz',
        'post /v1/runs',
        'get /v1/runs/{id}',
        'post /v1/runs/{id}/judge',
        'post /v1/runs/{id}/report-link',
        'get /v1/workflows/{id}/show',
        ...UNDER_DEADLINE,
      ]),
    );
    // The Stagehand protocol is excluded by name, with where it is described.
    expect(names.some((n) => n.includes('/stagehand'))).toBe(false);
    expect(doc.info.description).toMatch(/Excluded: the Stagehand v3 protocol routes under \/stagehand\//);
    expect(doc.info.description).toContain('README');

    const problems: string[] = [];
    for (const { name, path, method, op } of operations) {
      const authed = path.startsWith('/v1/');
      if (authed !== (op.security !== undefined && op.security.length > 0))
        problems.push(`${name}: security ${authed ? 'missing' : 'on an open route'}`);
      if (authed && !op.responses['401']?.description) problems.push(`${name}: no 401`);
      if (!authed && op.responses['401']) problems.push(`${name}: 401 on an open route`);
      if (method === 'get' && op.responses['202']) problems.push(`${name}: 202 on a GET`);
      // The body limit (app.ts) answers any /v1 call with a body before its route does.
      if (authed && method !== 'get' && !op.responses['413']?.description) problems.push(`${name}: no 413`);
      if (method === 'get' && op.responses['413']) problems.push(`${name}: 413 on a GET`);
      for (const [status, r] of Object.entries(op.responses))
        if (!r.description?.trim() || ['ok', 'error', 'accepted'].includes(r.description))
          problems.push(`${name}: ${status} has no real description`);
      // Run reads and page calls count against the key's limits.
      if ((method === 'get' && path.startsWith('/v1/runs/')) || UNDER_DEADLINE.includes(name))
        if (!op.responses['429']?.description) problems.push(`${name}: no 429`);
      if (UNDER_DEADLINE.includes(name) && !(op.responses['504'] && op.responses['502']))
        problems.push(`${name}: no 502 / 504`);
    }
    expect(problems).toEqual([]);
  });
});
