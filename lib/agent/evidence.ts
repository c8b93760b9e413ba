/**
 * A sample's evidence: numbered screenshots (`NN_label.png`), downloads, the action log and the
 * result, each hashed (SHA-256) by the store at write time and listed in the state. JSON written
 * here is scrubbed of secret values first; screenshots have secret-holding fields painted over.
 */
import type { Page } from 'playwright-core';
import { redactText } from '../perception/redact.ts';
import { snapshot } from '../perception/snapshot.ts';
import { setOfMarks } from '../perception/som.ts';
import type { Snapshot } from '../perception/types.ts';
import { safeFileName, sampleEvidenceKey } from '../store/keys.ts';
import type { EvidenceStore } from '../store/ports.ts';
import type { AgentState } from './state.ts';

export const ACTION_LOG = 'action_log.json';
export const RESULT_FILE = 'result.json';
export const STORAGE_STATE = 'storage_state.json';

const HOLDS_SECRET = /%[A-Za-z_][\w.-]*%/;

export const keyFor = (state: AgentState, file: string): string =>
  sampleEvidenceKey(state.tenant, state.runId, state.sampleId, file);

/** Records a written object in the state (a rewrite of the same key replaces its entry). */
function remember(state: AgentState, key: string, sha256: string): void {
  state.evidence = state.evidence.filter((e) => e.key !== key);
  state.evidence.push({ key, sha256 });
}

export async function putJson(
  store: EvidenceStore,
  state: AgentState,
  file: string,
  value: unknown,
  secrets: Record<string, string> | undefined,
  track = true,
): Promise<{ key: string; sha256: string }> {
  const key = keyFor(state, file);
  const text = redactText(JSON.stringify(value, null, 2), secrets);
  const obj = await store.put(key, text, 'application/json');
  if (track) remember(state, key, obj.sha256);
  return { key, sha256: obj.sha256 };
}

/**
 * Screenshot of the viewport as evidence: only the fields that hold a secret get a solid box, and
 * any visible text that shows a secret value is covered.
 */
export async function saveScreenshot(
  store: EvidenceStore,
  state: AgentState,
  page: Page,
  label: string,
  secrets: Record<string, string> | undefined,
): Promise<{ key: string; sha256: string; file: string }> {
  let png: Buffer;
  if (secrets && Object.values(secrets).some((v) => v)) {
    const snap: Snapshot = await snapshot(page, { secrets });
    const masked = { ...snap, elements: snap.elements.filter((e) => e.value && HOLDS_SECRET.test(e.value)) };
    png = await setOfMarks(page, masked, { secrets });
  } else png = await page.screenshot({ type: 'png' });
  state.screenshotCount += 1;
  const clean = safeFileName(label, 'page').replace(/\.png$/i, '');
  const file = `${String(state.screenshotCount).padStart(2, '0')}_${clean}.png`;
  const key = keyFor(state, file);
  const obj = await store.put(key, png, 'image/png');
  remember(state, key, obj.sha256);
  if (!state.artifacts.includes(label)) state.artifacts.push(label);
  return { key, sha256: obj.sha256, file };
}

/** A downloaded file as evidence, under a safe name with the step number in front. */
export async function saveDownload(
  store: EvidenceStore,
  state: AgentState,
  suggested: string,
  bytes: Uint8Array,
): Promise<{ key: string; sha256: string; file: string }> {
  const file = `${String(state.step + 1).padStart(2, '0')}_download_${safeFileName(suggested, 'download')}`;
  const key = keyFor(state, file);
  const obj = await store.put(key, bytes);
  remember(state, key, obj.sha256);
  return { key, sha256: obj.sha256, file };
}
