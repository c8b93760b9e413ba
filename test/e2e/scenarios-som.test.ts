import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import jpeg from 'jpeg-js';
import type { Browser, Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/api/app.ts';
import { scenarioFrom } from '../../lib/cli/scenario.ts';
import { createLlmClient } from '../../lib/llm/client.ts';
import type { LlmClient } from '../../lib/llm/types.ts';
import { compileScenario } from '../../lib/scenarios/compile.ts';
import { runScenario } from '../../lib/scenarios/run-scenario.ts';
import { parseScenario } from '../../lib/scenarios/spec.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { tempRoot } from '../support/agent-env.ts';
import type { RecordedRequest, ReplyFn, ScriptedModel } from '../support/llm-server.ts';
import { idInPrompt, modelConfig } from '../support/ops-env.ts';
import { type ScenarioTestEnv, startScenarioTestEnv } from '../support/scenario-env.ts';
import { type ScenarioSomSite, startScenarioSomSite } from '../support/scenario-som-site.ts';
import { serveOnLoopback } from '../support/serve.ts';

let env: ScenarioTestEnv<ScenarioSomSite>;
let browser: Browser;
let site: ScenarioSomSite;
let llm: ScriptedModel;
let model: LlmClient;

beforeAll(async () => {
  env = await startScenarioTestEnv(startScenarioSomSite, { viewport: { width: 1280, height: 720 } });
  ({ browser, site, llm, model } = env);
});
afterAll(() => env?.close());

const pageAt = (path: string): Promise<Page> => env.pageAt(path);

const decide = (d: Record<string, unknown>) => ({
  json: { reasoning: 'scripted', noteToFutureSelf: '', experiences: [], commands: [], ...d },
});
/** The requests of one run, in order (the handler records them as they come). */
function script(handler: (r: RecordedRequest, n: number) => ReturnType<ReplyFn>) {
  const seen: RecordedRequest[] = [];
  llm.setHandler((r) => {
    if (r.schemaName !== 'scenario_decision') return { status: 400 };
    seen.push(r);
    return handler(r, seen.length);
  });
  return seen;
}
/** The JSON Schema the request offered (not its prompt text). */
const offered = (r: RecordedRequest) => JSON.stringify(r.body.response_format ?? r.body.tools ?? {});
interface Decoded {
  mediaType: string;
  width: number;
  height: number;
  data: Uint8Array;
}
/**
 * Every picture of the request, decoded by its declared media type (PNG or JPEG): OpenAI image_url
 * data URLs and Anthropic base64 image blocks (a mislabelled picture would not decode).
 */
function pictures(r: RecordedRequest): Decoded[] {
  const out: Decoded[] = [];
  for (const m of (r.body.messages ?? []) as { content: unknown }[])
    for (const part of Array.isArray(m.content) ? m.content : []) {
      let mediaType: string | undefined;
      let data: string | undefined;
      if (part?.type === 'image_url') {
        const url = /^data:([^;]+);base64,(.*)$/s.exec(String(part.image_url.url));
        [mediaType, data] = [url?.[1], url?.[2]];
      } else if (part?.type === 'image') [mediaType, data] = [part.source.media_type, part.source.data];
      else continue;
      const bytes = Buffer.from(data ?? '', 'base64');
      const img = mediaType === 'image/png' ? PNG.sync.read(bytes) : jpeg.decode(bytes, { useTArray: true });
      out.push({ mediaType: mediaType ?? '', width: img.width, height: img.height, data: img.data });
    }
  return out;
}
const rgb = (png: Decoded, x: number, y: number) => {
  const i = (Math.round(y) * png.width + Math.round(x)) * 4;
  return [png.data[i]!, png.data[i + 1]!, png.data[i + 2]!];
};
const near = (a: number[], b: number[]) => a.every((v, i) => Math.abs(v - b[i]!) <= 40);

describe('scenarios in set-of-marks mode', () => {
  it('sends the marked viewport picture and the element map, with the outline trimmed', async () => {
    const page = await pageAt('/shop');
    const box = (await page.locator('#add-red').boundingBox())!;
    const seen = script((r, n) =>
      n === 1
        ? decide({
            status: 'complete',
            commands: [{ kind: 'action', action: 'click', id: idInPrompt(r.text, 'button', 'Add red mug') }],
          })
        : decide({
            status: 'complete',
            commands: [{ kind: 'verify', check: 'textEquals', selector: '#cart', expected: 'Cart: 1 item' }],
          }),
    );
    // The runner says what each iteration spent its time on (bench:scenarios prints the split).
    const phases: string[][] = [[]];
    const result = await runScenario(
      parseScenario({ steps: ['Add the red mug to the cart', 'Check the cart shows 1 item'], vision: 'som' }),
      {
        page,
        llm: model,
        onPhase: (phase) => phases.at(-1)!.push(phase),
        onIteration: () => phases.push([]),
      },
    );
    expect(result.status).toBe('passed');
    expect(phases.slice(0, 2)).toEqual([
      ['blockers', 'snapshot', 'picture', 'model', 'actions', 'bookkeeping'],
      ['blockers', 'snapshot', 'picture', 'model', 'verifications', 'bookkeeping'],
    ]);
    expect(seen).toHaveLength(2);
    const first = seen[0]!;
    expect(first.images).toBe(1);
    expect(first.system).toContain('Set-of-marks mode');
    // The element map names the ids drawn on the picture; the text outline's far-below footer is gone.
    expect(first.text).toContain('Marked elements');
    const id = idInPrompt(first.text, 'button', 'Add red mug');
    expect(first.text).toMatch(/\[\d+\] textbox: Search/);
    expect(first.text).not.toContain('Terms of sale');
    // The picture carries the marker: the button's box drawn in the button colour around it, and
    // the id's label in that colour at the box's top-left corner (above it).
    const [png] = pictures(first);
    expect(png!.mediaType).toBe('image/png');
    expect([png!.width, png!.height]).toEqual([1280, 720]);
    expect(near(rgb(png!, box.x + 0.5, box.y + box.height / 2), [0xe6, 0x19, 0x4b])).toBe(true);
    expect(near(rgb(png!, box.x + box.width / 2, box.y + 0.5), [0xe6, 0x19, 0x4b])).toBe(true);
    for (const dy of [-12, -7, -3])
      expect(near(rgb(png!, box.x + 1.5, box.y + dy), [0xe6, 0x19, 0x4b])).toBe(true);
    expect(id).toBeGreaterThan(0);
    // Without vision "som" the same page goes as text only, footer included.
    const textPage = await pageAt('/shop');
    const plain = script(() =>
      decide({ status: 'complete', commands: [{ kind: 'verify', check: 'textContains', expected: 'Mugs' }] }),
    );
    const textPhases: string[] = [];
    await runScenario(parseScenario({ steps: ['Check the page lists mugs'] }), {
      page: textPage,
      llm: model,
      onPhase: (phase) => textPhases.push(phase),
    });
    expect(plain[0]!.images).toBe(0);
    expect(textPhases).toEqual(['blockers', 'snapshot', 'model', 'verifications', 'bookkeeping']);
    expect(plain[0]!.text).toContain('Terms of sale');
    expect(offered(plain[0]!)).not.toContain('"look"');
    await page.context().close();
    await textPage.context().close();
  });

  it('is chosen by vision in POST /v1/scenarios and in the step file; a bad value is a 400 naming it', async () => {
    const root = await tempRoot();
    const app = createApp({
      keys: new Map([['key-a', 'tenant-a']]),
      policy: { allowPrivate: false, allowHosts: [new URL(site.url).host] },
      browser: async () => browser,
      env: {
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: llm.openaiBaseURL,
        BROWSERFN_MODEL: 'openai/gpt-4.1-mini',
      },
      agentStores: () => ({
        evidence: new LocalEvidenceStore(join(root, 'evidence')),
        runStore: undefined as never,
      }),
    });
    const { server, base } = await serveOnLoopback(app.fetch);
    const post = (body: unknown) =>
      fetch(`${base}/v1/scenarios`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer key-a' },
        body: JSON.stringify(body),
      });
    try {
      const seen = script(() =>
        decide({
          status: 'complete',
          commands: [{ kind: 'verify', check: 'textContains', expected: 'Mugs' }],
        }),
      );
      const ok = await post({ url: `${site.url}/shop`, steps: ['Check the page lists mugs'], vision: 'som' });
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as { status: string }).status).toBe('passed');
      expect(seen[0]!.images).toBe(1);
      const bad = await post({ url: `${site.url}/shop`, steps: ['Check the page'], vision: 'pixels' });
      expect(bad.status).toBe(400);
      expect(JSON.stringify(await bad.json())).toContain('vision');
      const file = join(root, 'steps.yaml');
      await writeFile(file, 'vision: som\nsteps:\n  - Check the page lists mugs\n');
      expect((await scenarioFrom(file, ['Add the red mug'])).vision).toBe('som');
    } finally {
      server.close();
    }
  });

  it.each([
    'openai',
    'anthropic',
  ] as const)('answers look commands within the iteration: a previous picture, then a repeat stops the asking (%s)', async (flavour) => {
    const page = await pageAt('/shop');
    const client =
      flavour === 'openai' ? model : createLlmClient({ ...modelConfig(llm, 'anthropic'), maxRetries: 0 });
    const seen = script((r, n) => {
      if (n === 1)
        return decide({
          status: 'continue',
          commands: [{ kind: 'action', action: 'click', id: idInPrompt(r.text, 'button', 'Show more') }],
        });
      if (n === 2)
        return decide({ status: 'continue', commands: [{ kind: 'look', tool: 'view_previous_screenshot' }] });
      if (n === 3)
        return decide({ status: 'continue', commands: [{ kind: 'look', tool: 'refresh_som_markers' }] });
      return decide({
        status: 'complete',
        commands: [{ kind: 'verify', check: 'isVisible', selector: '#extra-text' }],
      });
    });
    const result = await runScenario(parseScenario({ steps: ['Show more offers'], vision: 'som' }), {
      page,
      llm: client,
    });
    expect(result.status).toBe('passed');
    expect(seen).toHaveLength(4);
    expect(offered(seen[1]!)).toContain('"look"');
    // The picture reaches each provider's wire declared as what it is (it decodes as that type).
    const [pic] = pictures(seen[0]!);
    expect([pic!.mediaType, pic!.width, pic!.height]).toEqual(['image/png', 1280, 720]);
    // view_previous_screenshot: the picture iteration 1 started from, in the same conversation.
    expect(seen[2]!.images).toBe(2);
    expect(seen[2]!.text).toContain('The picture the previous iteration started from');
    // refresh_som_markers with nothing changed is the same picture: not sent, and looks are withdrawn.
    expect(seen[3]!.images).toBe(2);
    expect(seen[3]!.text).toContain('gives the same picture you already have');
    expect(offered(seen[3]!)).not.toContain('"look"');
    expect(result.iterations[1]!.looks).toEqual([
      'view_previous_screenshot: sent',
      'refresh_som_markers: not sent, same picture again (loop): looks stopped',
    ]);
    await page.context().close();
  });

  it('gives at most 3 pictures per step on request, then says the budget is spent', async () => {
    const page = await pageAt('/shop');
    const seen = script(async (_r, n) => {
      if (n <= 3) {
        // The page changes before each ask, so every refreshed picture is new.
        await page.evaluate((k) => {
          document.getElementById('cart')!.textContent = `Cart: ${k} items`;
        }, n + 1);
        return decide({ status: 'continue', commands: [{ kind: 'look', tool: 'refresh_som_markers' }] });
      }
      return decide({
        status: 'complete',
        commands: [{ kind: 'verify', check: 'textContains', expected: 'Mugs' }],
      });
    });
    const result = await runScenario(parseScenario({ steps: ['Check the page lists mugs'], vision: 'som' }), {
      page,
      llm: model,
    });
    expect(result.status).toBe('passed');
    expect(seen.map((r) => r.images)).toEqual([1, 2, 3, 4]);
    expect(seen[3]!.text).toContain('that was the last picture allowed in this step');
    expect(offered(seen[2]!)).toContain('"look"');
    expect(offered(seen[3]!)).not.toContain('"look"');
    expect(result.iterations[0]!.looks).toEqual([
      'refresh_som_markers: sent',
      'refresh_som_markers: sent',
      'refresh_som_markers: sent',
    ]);
    await page.context().close();
  });
});

describe('coordinate fallback', () => {
  // Save is drawn at canvas x 20–200, y 30–90; the canvas sits at (40, 120) in a 1280 × 720 viewport.
  const SAVE = { x: Number(((150 / 1280) * 100).toFixed(3)), y: Number(((180 / 720) * 100).toFixed(3)) };
  const tryByOutline = () =>
    decide({
      status: 'complete',
      reasoning: 'the toolbar has no Save in the outline; try the status check',
      commands: [{ kind: 'verify', check: 'textEquals', selector: '#status', expected: 'Saved' }],
    });

  it('is offered after 3 failed attempts, lands on the canvas-drawn control and is recorded with its element', async () => {
    const page = await pageAt('/board');
    const seen = script((_r, n) => {
      if (n <= 3) return tryByOutline();
      if (n === 4)
        return decide({
          status: 'continue',
          commands: [
            { kind: 'coordinate', action: 'click', ...SAVE, description: 'click Save on the toolbar' },
          ],
        });
      return decide({
        status: 'complete',
        commands: [{ kind: 'verify', check: 'textEquals', selector: '#status', expected: 'Saved' }],
      });
    });
    const result = await runScenario(parseScenario({ steps: ['Press Save on the drawing toolbar'] }), {
      page,
      llm: model,
    });
    expect(result.status).toBe('passed');
    expect(await page.locator('#status').textContent()).toBe('Saved');
    // Not offered while the step had fewer than 3 failed attempts (text mode: no picture either).
    for (const r of seen.slice(0, 3)) {
      expect(offered(r)).not.toContain('"coordinate"');
      expect(r.text).not.toContain('Coordinate commands are now offered');
      expect(r.images).toBe(0);
    }
    expect(offered(seen[3]!)).toContain('"coordinate"');
    expect(seen[3]!.text).toContain('this step failed 3 times');
    expect(seen[3]!.images).toBe(1);
    expect(result.iterations.map((i) => i.coordinates ?? false)).toEqual([false, false, false, true, true]);
    // The result names the element under the point, and the next picture shows where the click landed.
    expect(result.iterations[3]!.results[0]!.message).toBe(
      'click at (11.719%, 25.000%) on canvas "Drawing toolbar"',
    );
    const [next] = pictures(seen[4]!);
    expect(near(rgb(next!, 150 - 9, 180 + 1), [255, 0, 255])).toBe(true);
    // Recorded with its element and the place inside it; compiled, it replays through a model told both.
    const click = result.recorded.find((r) => r.kind === 'action');
    expect(click).toMatchObject({
      kind: 'action',
      action: { method: 'click', target: { locator: { role: 'canvas', name: 'Drawing toolbar' } } },
      point: {
        x: 11.719,
        y: 25,
        tag: 'canvas',
        element: 'canvas "Drawing toolbar"',
        positional: true,
        byLocator: false,
      },
    });
    if (click?.kind === 'action') expect(click.point?.within).toEqual({ fx: 0.183, fy: 0.5 });
    const { workflow, notCarried } = compileScenario(result);
    const node = workflow.nodes.find((n) => n.type === 'browser_ai_action');
    expect(node?.type === 'browser_ai_action' && node.config.instruction).toBe(
      'click Save on the toolbar: on the canvas "Drawing toolbar" at 18% of its width and 50% of its height',
    );
    expect(notCarried.some((n) => n.includes('replays through a model'))).toBe(true);
    await page.context().close();
  });

  it('in script mode refuses a coordinate command that gives no reason', async () => {
    const page = await pageAt('/board');
    script((_r, n) => {
      if (n <= 3) return tryByOutline();
      if (n === 4)
        return decide({ status: 'continue', commands: [{ kind: 'coordinate', action: 'click', ...SAVE }] });
      return decide({
        status: 'complete',
        commands: [
          {
            kind: 'coordinate',
            action: 'click',
            ...SAVE,
            reason: 'Save is drawn on a canvas: the outline has no element for it',
          },
          { kind: 'verify', check: 'textEquals', selector: '#status', expected: 'Saved' },
        ],
      });
    });
    const result = await runScenario(parseScenario({ steps: ['Press Save on the drawing toolbar'] }), {
      page,
      llm: model,
      scriptMode: true,
    });
    expect(result.iterations[3]!.results[0]).toMatchObject({ ok: false });
    expect(result.iterations[3]!.results[0]!.message).toContain('give "reason"');
    expect(result.status).toBe('passed');
    const click = result.recorded.find((r) => r.kind === 'action');
    expect(click?.kind === 'action' && click.point?.reason).toBe(
      'Save is drawn on a canvas: the outline has no element for it',
    );
    await page.context().close();
  });
});
