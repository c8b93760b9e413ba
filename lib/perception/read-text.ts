/**
 * The read's text as the page wrote it (injected/wire-text.ts): JSON (pure ASCII or not), or, for
 * text mostly past ASCII, base64 of its UTF-8. A read is a JSON object, so its text starts with
 * `{`; base64 never does.
 */
type NodeBuffer = { from(text: string, encoding: 'base64'): { toString(encoding: 'utf8'): string } };

export function readText(sent: string): string {
  if (sent.charCodeAt(0) === 123) return sent;
  // Node's own decoder where there is one; the edge worker decodes with web APIs.
  const buffer = (globalThis as { Buffer?: NodeBuffer }).Buffer;
  if (buffer) return buffer.from(sent, 'base64').toString('utf8');
  const binary = atob(sent);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new TextDecoder().decode(bytes);
}
