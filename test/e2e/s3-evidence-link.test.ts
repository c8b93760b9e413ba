/**
 * Issue 21 item 4 on AWS: the evidence route redirects to a presigned S3 URL, so the bucket's answer
 * must carry the same rule as the API's own (attachment for all but raster screenshots). Through the
 * real SDK against s3rver on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3EvidenceStore } from '../../lib/store/s3-evidence-store.ts';
import { type AwsLocal, startAwsLocal } from '../support/aws-local.ts';

let aws: AwsLocal;
let store: S3EvidenceStore;

beforeAll(async () => {
  aws = await startAwsLocal(['s3']);
  store = new S3EvidenceStore({ client: aws.s3.client, bucket: aws.s3.bucket });
});
afterAll(async () => {
  await aws?.stop();
});

describe('presigned evidence links', () => {
  it('make the bucket answer a downloaded page as an attachment, a screenshot inline', async () => {
    const page = 't/run_r/samples/s1/evil.html';
    await store.put(page, '<script>document.title="pwned"</script>', 'text/html');
    const res = await fetch((await store.link(page, 60))!);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="evil.html"');
    expect(await res.text()).toContain('<script>');
    const shot = 't/run_r/samples/s1/01_start.png';
    await store.put(shot, new Uint8Array([137, 80, 78, 71]), 'image/png');
    const img = await fetch((await store.link(shot, 60))!);
    expect(img.headers.get('content-type')).toBe('image/png');
    expect(img.headers.get('content-disposition')).toMatch(/^inline/);
    await img.body?.cancel();
  });
});
