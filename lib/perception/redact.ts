import type { Snapshot } from './types.ts';

/**
 * Replaces secret values with their `%name%` placeholder wherever a model or a log could read
 * them: the tree text, element values/names, and the URL map. Longest values first so a secret
 * that contains another is not half-replaced.
 */
export function redactSecrets(snapshot: Snapshot, secrets: Record<string, string> | undefined): Snapshot {
  if (!secrets || Object.values(secrets).every((v) => !v)) return snapshot;
  const scrub = (s: string): string => redactText(s, secrets);
  const scrubOpt = (s: string | undefined) => (s === undefined ? undefined : scrub(s));
  snapshot.tree = scrub(snapshot.tree);
  snapshot.url = scrub(snapshot.url);
  snapshot.title = scrub(snapshot.title);
  // `complete` (when there) holds every element, those in `elements` included.
  for (const el of snapshot.complete ?? snapshot.elements) {
    el.name = scrub(el.name);
    el.locator.name = scrub(el.locator.name);
    const value = scrubOpt(el.value);
    if (value !== undefined) el.value = value;
    const url = scrubOpt(el.url);
    if (url !== undefined) el.url = url;
    // Page text near a field can echo what was typed elsewhere ("Signed in as …").
    if (el.facts?.nearby) el.facts.nearby = scrub(el.facts.nearby);
  }
  for (const key of Object.keys(snapshot.urls)) snapshot.urls[key] = scrub(snapshot.urls[key]!);
  return snapshot;
}

/** Same scrub for any string leaving the process (messages, errors, logs). */
export function redactText(text: string, secrets: Record<string, string> | undefined): string {
  let out = text;
  const pairs = Object.entries(secrets ?? {})
    .filter(([, v]) => v.length > 0)
    .sort((a, b) => b[1].length - a[1].length);
  for (const [name, value] of pairs) if (out.includes(value)) out = out.split(value).join(`%${name}%`);
  return out;
}
