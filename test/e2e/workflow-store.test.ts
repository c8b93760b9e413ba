/**
 * The workflow store on local files and on DynamoDB + S3 (dynalite, s3rver, real SDK v3): immutable
 * versions, two racing writers never both get version N, tenant scope, large documents by pointer,
 * `verified` after N identical successes, and the store chosen from the environment.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storesFromEnv } from '../../lib/store/config.ts';
import { DynamoWorkflowStore } from '../../lib/store/dynamo-workflow-store.ts';
import { LocalWorkflowStore } from '../../lib/store/local-workflow-store.ts';
import { S3EvidenceStore } from '../../lib/store/s3-evidence-store.ts';
import { saveNextVersion, type WorkflowStore } from '../../lib/store/workflow-ports.ts';
import { type AwsLocal, startAwsLocal } from '../support/aws-local.ts';

let aws: AwsLocal;
beforeAll(async () => {
  aws = await startAwsLocal(['dynamo', 's3']);
});
afterAll(async () => {
  await aws?.stop();
});

const doc = (name: string, extra: Record<string, string> = {}) => ({
  name,
  version: 1,
  inputs: {},
  nodes: [
    { alias: 'open', description: '', type: 'browser_action', config: { action: 'navigate', url: 'x' } },
  ],
  ...extra,
});

function contract(label: string, make: () => Promise<WorkflowStore>) {
  describe(label, () => {
    it('keeps every version, answers the latest, and refuses to overwrite one', async () => {
      const store = await make();
      expect(await store.putVersion({ tenant: 't1', id: 'shop', version: 1, document: doc('Shop') })).toBe(
        'written',
      );
      expect(
        await store.putVersion({ tenant: 't1', id: 'shop', version: 1, document: doc('Overwrite') }),
      ).toBe('exists');
      const v2 = await saveNextVersion(store, {
        tenant: 't1',
        id: 'shop',
        document: doc('Shop healed'),
        parent: 1,
        note: 'healed open',
      });
      expect(v2).toBe(2);
      expect((await store.getVersion('t1', 'shop'))?.document.name).toBe('Shop healed');
      const first = await store.getVersion('t1', 'shop', 1);
      expect(first?.document.name).toBe('Shop');
      expect((await store.listVersions('t1', 'shop')).map((v) => [v.version, v.parent, v.note])).toEqual([
        [1, undefined, undefined],
        [2, 1, 'healed open'],
      ]);
      expect(await store.list('t1')).toEqual([
        expect.objectContaining({ id: 'shop', name: 'Shop healed', latest: 2 }),
      ]);
    });

    it('gives racing writers consecutive versions, never the same one', async () => {
      const store = await make();
      const versions = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          saveNextVersion(store, { tenant: 't1', id: 'race', document: doc(`writer ${i}`) }),
        ),
      );
      expect([...versions].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
      const stored = await store.listVersions('t1', 'race');
      expect(new Set(stored.map((v) => v.document.name)).size).toBe(6);
      expect((await store.list('t1')).find((w) => w.id === 'race')?.latest).toBe(6);
    });

    it('scopes everything to the tenant', async () => {
      const store = await make();
      await store.putVersion({ tenant: 'a/b', id: 'mine', version: 1, document: doc('A') });
      expect(await store.getVersion('a_b', 'mine')).toBeUndefined();
      expect(await store.getVersion('other', 'mine', 1)).toBeUndefined();
      expect(await store.listVersions('other', 'mine')).toEqual([]);
      expect(await store.list('other')).toEqual([]);
      expect(await store.recordOutcome('other', 'mine', 1, { ok: true, signature: 's' })).toBeUndefined();
      expect((await store.list('a/b')).map((w) => w.id)).toEqual(['mine']);
    });

    it('marks a version verified after 3 identical successes, not after mixed ones', async () => {
      const store = await make();
      await store.putVersion({ tenant: 't1', id: 'v', version: 1, document: doc('V') });
      const seen = [];
      for (const outcome of [
        { ok: true, signature: 'a' },
        { ok: true, signature: 'b' },
        { ok: false, signature: '' },
        { ok: true, signature: 'a' },
        { ok: true, signature: 'a' },
      ]) {
        seen.push((await store.recordOutcome('t1', 'v', 1, outcome))?.verified);
      }
      expect(seen).toEqual([false, false, false, false, false]);
      const third = await store.recordOutcome('t1', 'v', 1, { ok: true, signature: 'a' });
      expect(third).toMatchObject({ verified: true, streak: 3, runs: { ok: 5, failed: 1 } });
      // Verified stays: a later failure resets the streak, not the mark.
      expect(await store.recordOutcome('t1', 'v', 1, { ok: false, signature: '' })).toMatchObject({
        verified: true,
        streak: 0,
      });
      expect((await store.getVersion('t1', 'v', 1))?.verified).toBe(true);
    });

    it('loses no outcome when samples record at once', async () => {
      const store = await make();
      await store.putVersion({ tenant: 't1', id: 'busy', version: 1, document: doc('Busy') });
      await Promise.all(
        Array.from({ length: 8 }, () =>
          store.recordOutcome('t1', 'busy', 1, { ok: true, signature: 'same' }),
        ),
      );
      expect(await store.getVersion('t1', 'busy', 1)).toMatchObject({
        verified: true,
        streak: 8,
        runs: { ok: 8, failed: 0 },
      });
    });
  });
}

contract('local files', async () => new LocalWorkflowStore(await mkdtemp(join(tmpdir(), 'bfn-wf-'))));

let tableCounter = 0;
contract('DynamoDB + S3', async () => {
  const blobs = new S3EvidenceStore({
    client: aws.s3.client,
    bucket: aws.s3.bucket,
    prefix: `p${tableCounter++}/`,
  });
  // The table is shared by the cases: each gets its own tenants by a prefix only this wrapper adds.
  const inner = new DynamoWorkflowStore({ client: aws.dynamo.client, table: aws.dynamo.table, blobs });
  const ns = `case${tableCounter}-`;
  const scoped: WorkflowStore = {
    putVersion: (input) => inner.putVersion({ ...input, tenant: ns + input.tenant }),
    getVersion: (t, id, v) => inner.getVersion(ns + t, id, v).then((r) => r && { ...r, tenant: t }),
    listVersions: (t, id) => inner.listVersions(ns + t, id),
    list: (t) => inner.list(ns + t).then((rows) => rows.map((r) => ({ ...r, tenant: t }))),
    recordOutcome: (t, id, v, o) => inner.recordOutcome(ns + t, id, v, o),
  };
  return scoped;
});

describe('DynamoDB + S3 only', () => {
  it('keeps a large document in S3 by pointer and reads it back whole', async () => {
    const blobs = new S3EvidenceStore({ client: aws.s3.client, bucket: aws.s3.bucket });
    const store = new DynamoWorkflowStore({
      client: aws.dynamo.client,
      table: aws.dynamo.table,
      blobs,
      inlineLimitBytes: 1000,
    });
    const big = doc('Big', { padding: 'x'.repeat(50_000) });
    expect(await store.putVersion({ tenant: 'big', id: 'w', version: 1, document: big })).toBe('written');
    expect(await store.putVersion({ tenant: 'big', id: 'w', version: 1, document: doc('loser') })).toBe(
      'exists',
    );
    expect((await store.getVersion('big', 'w'))?.document).toEqual(big);
    const keys = await blobs.list('big/_workflows/');
    expect(keys).toHaveLength(1); // the loser's copy was removed, the winner's kept
  });

  it('is what storesFromEnv gives when the table and bucket are set', async () => {
    const stores = storesFromEnv({ ...aws.env, BROWSERFN_WORKFLOW_VERIFY_AFTER: '2' });
    expect(stores.describe.workflows).toBe(`dynamodb:${aws.dynamo.table}`);
    await stores.workflows.putVersion({ tenant: 'env', id: 'w', version: 1, document: doc('Env') });
    await stores.workflows.recordOutcome('env', 'w', 1, { ok: true, signature: 'x' });
    expect(
      (await stores.workflows.recordOutcome('env', 'w', 1, { ok: true, signature: 'x' }))?.verified,
    ).toBe(true);
    expect(() => storesFromEnv({ BROWSERFN_WORKFLOW_VERIFY_AFTER: 'three' })).toThrow(
      /BROWSERFN_WORKFLOW_VERIFY_AFTER must be a whole number/,
    );
  });
});
