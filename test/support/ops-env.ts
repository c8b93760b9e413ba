import type { Browser } from 'playwright-core';
import { mergePolicy } from '../../lib/browser/guard-policy.ts';
import { openSession, type Session } from '../../lib/browser/session.ts';
import { createLlmClient } from '../../lib/llm/client.ts';
import type { LlmClient, ModelConfig } from '../../lib/llm/types.ts';
import type { OpContext } from '../../lib/ops/types.ts';
import type { FixtureServer } from './fixture-server.ts';
import type { ScriptedModel } from './llm-server.ts';

export type Flavour = 'openai' | 'anthropic';

export function modelConfig(llm: ScriptedModel, flavour: Flavour): ModelConfig {
  return flavour === 'openai'
    ? {
        provider: 'openai',
        model: 'gpt-4.1-mini',
        baseURL: llm.openaiBaseURL,
        apiKey: 'sk-test',
        backoffMs: 10,
      }
    : {
        provider: 'anthropic',
        model: 'claude-sonnet-4-6',
        baseURL: llm.anthropicBaseURL,
        apiKey: 'sk-test',
        backoffMs: 10,
      };
}

export function client(llm: ScriptedModel, flavour: Flavour, log?: (e: { msg: string }) => void): LlmClient {
  return createLlmClient(modelConfig(llm, flavour), log ? { log } : {});
}

/** A guarded session on a fixture page (the fixture origins allow-listed), ready for ops. */
export async function fixtureSession(browser: Browser, site: FixtureServer, path: string): Promise<Session> {
  const policy = mergePolicy(
    { allowPrivate: false, allowHosts: [] },
    { allowHosts: [`127.0.0.1:${site.port}`, `127.0.0.1:${site.crossOriginPort}`] },
  );
  const session = await openSession({ browser, url: site.url + path, policy });
  await session.page.waitForLoadState('load');
  return session;
}

export function opContext(session: Session, extra: Partial<OpContext> = {}): OpContext {
  return { page: session.page, checkNavigation: session.checkNavigation, ...extra };
}

/** The id the page outline in a prompt gives an element: `[12] button: Sign in`. */
export function idInPrompt(text: string, role: string, name: string): number {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp(`\\[(\\d+)\\] ${role}: ${escaped}(?:$| )`, 'm').exec(text);
  if (!m) throw new Error(`no "${role}: ${name}" in the prompt`);
  return Number(m[1]);
}
