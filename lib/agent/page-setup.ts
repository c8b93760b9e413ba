/**
 * Getting a slice's page ready: a fresh guarded page, the sample's saved cookies and localStorage
 * put back, and the page at the URL where the last slice left off.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { pacedGoto, pageUnusable } from '../browser/navigate.ts';
import { settle } from '../browser/settle.ts';
import { redactText } from '../perception/redact.ts';
import type { EvidenceStore } from '../store/ports.ts';
import type { AgentDeps } from './deps.ts';
import { keyFor, STORAGE_STATE } from './evidence.ts';
import type { AgentState } from './state.ts';

type StorageState = Awaited<ReturnType<BrowserContext['storageState']>>;

export async function restoreStorage(page: Page, evidence: EvidenceStore, pointer: string): Promise<void> {
  const bytes = await evidence.get(pointer);
  if (!bytes) return;
  const saved = JSON.parse(Buffer.from(bytes).toString('utf8')) as StorageState;
  if (saved.cookies.length) await page.context().addCookies(saved.cookies);
  const origins = saved.origins.filter((o) => o.localStorage.length > 0);
  if (origins.length)
    await page.context().addInitScript((all: StorageState['origins']) => {
      const mine = all.find((o) => o.origin === location.origin);
      if (!mine) return;
      for (const { name, value } of mine.localStorage)
        if (localStorage.getItem(name) === null) localStorage.setItem(name, value);
    }, origins);
}

/** Saves cookies + localStorage (secret values scrubbed) and points the state at them. */
export async function saveStorage(
  page: Page,
  evidence: EvidenceStore,
  state: AgentState,
  secrets?: Record<string, string>,
): Promise<void> {
  const storage = await page.context().storageState();
  const key = keyFor(state, STORAGE_STATE);
  await evidence.put(key, redactText(JSON.stringify(storage), secrets), 'application/json');
  state.storageStatePointer = key;
}

export async function openPage(
  deps: AgentDeps,
  state: AgentState,
): Promise<{ page: Page; close(): Promise<void> }> {
  const handle = await deps.newPage();
  try {
    if (state.storageStatePointer)
      await restoreStorage(handle.page, deps.evidence, state.storageStatePointer);
    // A page handed over already at the URL (an attached session, Stagehand's agentExecute) keeps
    // its state; anything else is brought there.
    let response: Awaited<ReturnType<typeof pacedGoto>> = null;
    if (handle.page.url() !== state.url) {
      if (deps.checkNavigation) await deps.checkNavigation(state.url);
      response = await pacedGoto(handle.page, state.url, deps.onThrottle);
    }
    await settle(handle.page, { timeoutMs: 3000 });
    const gone = response && pageUnusable(response, handle.page.url());
    if (gone) throw new Error(gone);
    return handle;
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err;
  }
}
