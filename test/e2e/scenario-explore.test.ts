import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/api/app.ts';
import type { LlmClient } from '../../lib/llm/types.ts';
import { compileJourney, explore } from '../../lib/scenarios/explore.ts';
import { runWorkflow } from '../../lib/workflows/executor.ts';
import { type ExploreSite, startExploreSite } from '../support/explore-site.ts';
import type { RecordedRequest, ScriptedModel } from '../support/llm-server.ts';
import { idInPrompt } from '../support/ops-env.ts';
import { type ScenarioTestEnv, startScenarioTestEnv } from '../support/scenario-env.ts';
import { serveOnLoopback } from '../support/serve.ts';

let env: ScenarioTestEnv<ExploreSite>;
let browser: Browser;
let site: ExploreSite;
let llm: ScriptedModel;
let model: LlmClient;

beforeAll(async () => {
  env = await startScenarioTestEnv(startExploreSite);
  ({ browser, site, llm, model } = env);
});
afterAll(() => env?.close());

const pageAt = (path: string): Promise<Page> => env.pageAt(path);

const isExplore = (r: RecordedRequest) => r.schemaName === 'explore_decision';
const explorations = () => llm.requests.filter(isExplore);
const pathOf = (r: RecordedRequest) =>
  new URL(/Current page: (\S+)/.exec(r.text)?.[1] ?? 'http://x/?').pathname;
const decide = (d: Record<string, unknown>) => ({
  json: {
    reasoning: 'scripted',
    status: 'continue',
    journey: 'x',
    step: '',
    journeyDone: false,
    noteToFutureSelf: '',
    experiences: [],
    commands: [],
    ...d,
  },
});
const click = (r: RecordedRequest, role: string, name: string) => ({
  kind: 'action',
  action: 'click',
  id: idInPrompt(r.text, role, name),
});

/** An explorer of the notes and settings features, as a careful tester would go about it. */
function tidyModel(r: RecordedRequest) {
  if (!isExplore(r)) return { status: 400 };
  const path = pathOf(r);
  if (path === '/') {
    if (!r.text.includes('- add-note (recorded)'))
      return decide({ journey: 'add-note', step: 'Open Notes', commands: [click(r, 'link', 'Notes')] });
    if (!r.text.includes('- change-settings (recorded)'))
      return decide({
        journey: 'change-settings',
        step: 'Open Settings',
        commands: [click(r, 'link', 'Settings')],
      });
    return decide({ status: 'complete', journey: 'change-settings', reasoning: 'both features covered' });
  }
  if (path === '/notes')
    return decide({
      journey: 'add-note',
      step: 'Add a note saying Tea',
      journeyDone: true,
      commands: [
        { kind: 'action', action: 'fill', id: idInPrompt(r.text, 'textbox', 'New note'), value: 'Tea' },
        click(r, 'button', 'Add note'),
        {
          kind: 'verify',
          check: 'textContains',
          selector: '#notes',
          expected: 'Tea',
          description: 'the note is listed',
        },
      ],
    });
  if (path === '/settings')
    return decide({
      journey: 'change-settings',
      step: 'Turn dark mode on and save',
      journeyDone: true,
      commands: [
        { kind: 'action', action: 'check', id: idInPrompt(r.text, 'checkbox', 'Dark mode') },
        click(r, 'button', 'Save settings'),
        { kind: 'verify', check: 'textEquals', selector: '#saved', expected: 'Saved: dark mode on' },
      ],
    });
  if (path === '/members')
    return decide({
      journey: 'member-news',
      step: 'Sign in with the test account',
      commands: [
        { kind: 'action', action: 'fill', id: idInPrompt(r.text, 'textbox', 'E-mail'), value: '%email%' },
        {
          kind: 'action',
          action: 'fill',
          id: idInPrompt(r.text, 'textbox', 'Password'),
          value: '%password%',
        },
        click(r, 'button', 'Sign in'),
      ],
    });
  if (path === '/members/home')
    return r.text.includes('- member-news (recorded)')
      ? decide({ status: 'complete', journey: 'member-news' })
      : decide({
          journey: 'member-news',
          step: 'Read the member news',
          journeyDone: true,
          commands: [{ kind: 'verify', check: 'textContains', selector: '#news', expected: 'spring sale' }],
        });
  return decide({ status: 'stuck', reasoning: `unexpected page ${path}` });
}

describe('exploratory mode', () => {
  it('records two journeys from one goal, each a scenario that compiles and replays with zero tokens', async () => {
    llm.setHandler(tidyModel);
    const page = await pageAt('/');
    const before = explorations().length;
    const result = await explore({ page, llm: model, goal: 'Explore the notes and settings features' });
    expect(result.status).toBe('complete');
    expect(explorations().length - before).toBe(5);
    expect(result.journeys.map((j) => [j.id, j.status])).toEqual([
      ['add-note', 'complete'],
      ['change-settings', 'complete'],
    ]);
    expect(result.journeys[0]!.scenario.steps).toEqual([
      { do: 'Open Notes' },
      { do: 'Add a note saying Tea', expect: 'the note is listed' },
    ]);
    // Each journey started from the start page: the settings journey's first prompt was on "/".
    const asked = explorations().slice(before);
    expect(asked.map(pathOf)).toEqual(['/', '/notes', '/', '/settings', '/']);
    expect(asked[2]!.text).toContain('Journey "add-note" recorded.');

    // Each journey compiles and replays on a fresh page without a model.
    const calls = llm.requests.length;
    for (const [journey, check] of [
      [
        result.journeys[0]!,
        async (p: Page) => expect(await p.locator('#notes li').allTextContents()).toEqual(['Tea']),
      ],
      [
        result.journeys[1]!,
        async (p: Page) => expect(await p.locator('#saved').textContent()).toBe('Saved: dark mode on'),
      ],
    ] as const) {
      const { workflow, notCarried } = compileJourney(journey);
      expect(notCarried).toEqual([]);
      const replay = await pageAt('/');
      const state = await runWorkflow(
        workflow,
        {
          tenant: 't',
          runId: 'r',
          sampleId: journey.id,
          inputs: { url: `${site.url}/` },
          url: `${site.url}/`,
        },
        { page: replay },
      );
      expect(state.status).toBe('done');
      await check(replay);
      await replay.context().close();
    }
    expect(llm.requests.length).toBe(calls);
    await page.context().close();
  });

  it('stops stuck at a login it has no credentials for and at a CAPTCHA; with test credentials it signs in, the model never seeing them', async () => {
    llm.setHandler((r) =>
      pathOf(r) !== '/'
        ? tidyModel(r)
        : r.text.includes('- member-news (recorded)')
          ? decide({ status: 'complete', journey: 'member-news' })
          : decide({
              journey: 'member-news',
              step: 'Open the members area',
              commands: [click(r, 'link', 'Members area')],
            }),
    );
    const page = await pageAt('/');
    const before = explorations().length;
    const stuck = await explore({ page, llm: model, goal: 'Read the member news' });
    expect(stuck.status).toBe('stuck');
    expect(stuck.reason).toBe(
      `a login form at ${site.url}/members and no test credentials (give them as variables, typed as %name%)`,
    );
    // The stop is the explorer's own check: the model was asked once (on the home page), never on the login page.
    expect(explorations().length - before).toBe(1);
    expect(stuck.journeys.map((j) => [j.id, j.status])).toEqual([['member-news', 'incomplete']]);
    // A CAPTCHA stops it too, credentials or not, before any model call.
    const contact = await pageAt('/contact');
    const mark0 = explorations().length;
    const captcha = await explore({
      page: contact,
      llm: model,
      goal: 'Send a message',
      variables: { x: 'y' },
    });
    expect(captcha).toMatchObject({
      status: 'stuck',
      reason: `a CAPTCHA at ${site.url}/contact: an explorer does not solve CAPTCHAs`,
    });
    expect(explorations().length).toBe(mark0);
    await contact.context().close();

    const again = await pageAt('/');
    const mark = explorations().length;
    const signedIn = await explore({
      page: again,
      llm: model,
      goal: 'Read the member news',
      variables: { email: 'ada@example.com', password: 'hunter2' },
    });
    expect(signedIn.status).toBe('complete');
    expect(signedIn.journeys[0]!.scenario.steps.map((s) => s.do)).toEqual([
      'Open the members area',
      'Sign in with the test account',
      'Read the member news',
    ]);
    const sent = explorations().slice(mark);
    expect(sent[0]!.text).toContain('%email%, %password%');
    for (const r of sent) expect(r.text).not.toContain('hunter2');
    expect(JSON.stringify(signedIn)).not.toContain('hunter2');
    // The signed-in journey replays without a model, the credentials given to the replay only.
    const { workflow } = compileJourney(signedIn.journeys[0]!);
    expect(JSON.stringify(workflow)).not.toContain('hunter2');
    const replay = await pageAt('/');
    const calls = llm.requests.length;
    const state = await runWorkflow(
      workflow,
      { tenant: 't', runId: 'r', sampleId: 'member', inputs: { url: `${site.url}/` }, url: `${site.url}/` },
      { page: replay, variables: { email: 'ada@example.com', password: 'hunter2' } },
    );
    expect(state.status).toBe('done');
    expect(llm.requests.length).toBe(calls);
    expect(new URL(replay.url()).pathname).toBe('/members/home');
    await replay.context().close();
    for (const p of [page, again]) await p.context().close();
  });
});

describe('POST /v1/explore', () => {
  it('answers the journeys found with their workflows, stuck with the reason, 400 naming the field', async () => {
    llm.setHandler(tidyModel);
    const app = createApp({
      keys: new Map([['key-a', 'tenant-a']]),
      policy: { allowPrivate: false, allowHosts: [`127.0.0.1:${site.port}`] },
      browser: async () => browser,
      env: {
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: llm.openaiBaseURL,
        BROWSERFN_MODEL: 'openai/gpt-4.1-mini',
      },
    });
    const { server, base } = await serveOnLoopback(app.fetch);
    const post = (body: unknown) =>
      fetch(`${base}/v1/explore`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer key-a' },
        body: JSON.stringify(body),
      });
    try {
      const res = await post({
        url: `${site.url}/`,
        goal: 'Explore the notes and settings features',
        compile: true,
      });
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.status).toBe('complete');
      expect(body.usage.calls).toBe(5);
      expect(body.journeys.map((j: { id: string }) => j.id)).toEqual(['add-note', 'change-settings']);
      expect(body.journeys[1].steps).toEqual([
        { do: 'Open Settings' },
        { do: 'Turn dark mode on and save', expect: 'textEquals Saved: dark mode on' },
      ]);
      expect(body.journeys[0].workflow.source).toEqual({ kind: 'scenario', url: `${site.url}/` });

      const bad = await post({ url: `${site.url}/`, goal: ' ' });
      expect(bad.status).toBe(400);
      expect((await bad.json()).error.message).toMatch(/^goal: /);
    } finally {
      server.close();
    }
  });
});
