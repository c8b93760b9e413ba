/**
 * A set-of-marks picture carries its media type (fast PNG today; JPEG was measured and may come
 * back): whatever it declares must reach each provider's wire format as declared, bytes unchanged,
 * through the real SDKs — not a PNG label on JPEG bytes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLlmClient } from '../../lib/llm/client.ts';
import { imagePart } from '../../lib/scenarios/som-mode.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { modelConfig } from '../support/ops-env.ts';

let llm: ScriptedModel;
beforeAll(async () => {
  llm = await startScriptedModel();
});
afterAll(() => llm?.close());

/** The smallest JPEG header a size reader accepts (SOI, SOF0 1280 × 720): bytes are bytes to the wire. */
const JPEG = Buffer.from([
  0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x02, 0xd0, 0x05, 0x00, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01,
  0x03, 0x11, 0x01, 0xff, 0xd9,
]);

describe('the model picture on the wire', () => {
  it.each([
    'openai',
    'anthropic',
  ] as const)('goes as image/jpeg with its bytes unchanged (%s)', async (flavour) => {
    llm.requests.length = 0;
    llm.setHandler(() => ({ json: { ok: true } }));
    const client = createLlmClient({ ...modelConfig(llm, flavour), maxRetries: 0 });
    const part = imagePart({ image: JPEG, mediaType: 'image/jpeg' });
    await client.generate({
      system: 'Look.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is marked?' }, part] }],
      schema: z.object({ ok: z.boolean() }),
      schemaName: 'answer',
    });
    const sent = llm.requests[0]!;
    expect(sent.images).toBe(1);
    type Part = { type: string; image_url?: { url: string }; source?: { media_type: string; data: string } };
    const user = (sent.body.messages as { role: string; content: Part[] }[]).find((m) => m.role === 'user')!;
    const image = user.content.find((p) => p.type === 'image_url' || p.type === 'image')!;
    const wire = image.image_url?.url ?? `data:${image.source?.media_type};base64,${image.source?.data}`;
    expect(wire).toBe(`data:image/jpeg;base64,${JPEG.toString('base64')}`);
  });
});
