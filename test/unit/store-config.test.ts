import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { storesFromEnv } from '../../lib/store/config.ts';
import { DynamoRunStore } from '../../lib/store/dynamo-run-store.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import { S3EvidenceStore } from '../../lib/store/s3-evidence-store.ts';

describe('storesFromEnv', () => {
  it('uses local files under the working folder when nothing AWS is set', () => {
    const stores = storesFromEnv({}, { cwd: '/work/project' });
    expect(stores.runs).toBeInstanceOf(LocalRunStore);
    expect(stores.evidence).toBeInstanceOf(LocalEvidenceStore);
    expect(stores.describe).toMatchObject({
      runs: join('/work/project', '.browserfn', 'runs'),
      evidence: join('/work/project', 'evidence'),
    });
    const moved = storesFromEnv(
      { BROWSERFN_RUNS_DIR: 'state', BROWSERFN_EVIDENCE_DIR: '/data/ev' },
      { cwd: '/w' },
    );
    expect(moved.describe).toMatchObject({ runs: '/w/state', evidence: '/data/ev' });
  });

  it('on Lambda, whose code folder is read-only, keeps local files in one folder under /tmp', () => {
    const lambda = { AWS_LAMBDA_FUNCTION_NAME: 'browserfn-api' };
    expect(storesFromEnv(lambda).describe).toMatchObject({
      runs: '/tmp/browserfn/runs',
      evidence: '/tmp/browserfn/evidence',
    });
    expect(storesFromEnv({ ...lambda, BROWSERFN_DATA_DIR: '/tmp/x' }).describe).toMatchObject({
      runs: '/tmp/x/runs',
      evidence: '/tmp/x/evidence',
    });
    expect(storesFromEnv({ ...lambda, BROWSERFN_RUNS_DIR: '/mnt/efs/runs' }).describe.runs).toBe(
      '/mnt/efs/runs',
    );
  });

  it('uses DynamoDB and S3 when the table and bucket are named', () => {
    const stores = storesFromEnv({
      BROWSERFN_TABLE: 'runs',
      BROWSERFN_BUCKET: 'evidence-bucket',
      BROWSERFN_EVIDENCE_PREFIX: 'ev/',
      AWS_REGION: 'eu-west-1',
    });
    expect(stores.runs).toBeInstanceOf(DynamoRunStore);
    expect(stores.evidence).toBeInstanceOf(S3EvidenceStore);
    expect(stores.describe).toMatchObject({ runs: 'dynamodb:runs', evidence: 's3://evidence-bucket/ev/' });
    const evidenceOnly = storesFromEnv({ BROWSERFN_BUCKET: 'b', AWS_REGION: 'eu-west-1' }, { cwd: '/w' });
    expect(evidenceOnly.runs).toBeInstanceOf(LocalRunStore);
  });

  it('names the setting that is wrong', () => {
    expect(() => storesFromEnv({ BROWSERFN_TABLE: 'runs' })).toThrow(/BROWSERFN_BUCKET/);
    expect(() => storesFromEnv({ BROWSERFN_BUCKET: 'b', BROWSERFN_S3_ENDPOINT: 'not a url' })).toThrow(
      /BROWSERFN_S3_ENDPOINT/,
    );
    expect(() =>
      storesFromEnv({
        BROWSERFN_TABLE: 't',
        BROWSERFN_BUCKET: 'b',
        BROWSERFN_DYNAMO_ENDPOINT: 'ftp://127.0.0.1',
      }),
    ).toThrow(/BROWSERFN_DYNAMO_ENDPOINT must be an http/);
  });
});
