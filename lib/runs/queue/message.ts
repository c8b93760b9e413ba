/**
 * What a job message on the queue says: which task (inline, or a spec stored earlier) over which URLs.
 * One zod schema is the type, the validator and the documented shape.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ID_RULE, ID_RULE_TEXT } from '../../store/names.ts';
import type { Json } from '../../store/ports.ts';

const HttpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:/i.test(u), 'must be an http(s) URL');

export const QueueMessageSchema = z
  .object({
    /** Idempotency key: redeliveries and resends with the same id never produce a second result. */
    // The shared id rule: a job id becomes part of storage keys, so an over-long or odd one is
    // refused here (to the DLQ, naming the field) instead of failing in a store on every delivery.
    jobId: z
      .string()
      .regex(ID_RULE, `must be ${ID_RULE_TEXT}`)
      .optional()
      .describe('idempotency key; defaults to the SQS message id'),
    task: z.union([
      z.object({ spec: z.record(z.string(), z.unknown()) }).strict(),
      z.object({ specId: z.string().min(1).max(200) }).strict(),
    ]),
    urls: z.array(HttpUrl).min(1).max(100),
    /** Input columns passed to every sample of this message. */
    input: z.record(z.string(), z.string()).optional(),
    /** Where results go besides the run store. */
    output: z.object({ queueUrl: z.string().url().optional() }).strict().optional(),
  })
  .strict();

export type QueueMessage = z.infer<typeof QueueMessageSchema>;

export type ParsedMessage = { ok: true; message: QueueMessage } | { ok: false; reason: string };

/** Parses a message body; the reason names the first bad field, as a DLQ reader needs it. */
export function parseQueueMessage(body: string): ParsedMessage {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, reason: 'message body is not JSON' };
  }
  const parsed = QueueMessageSchema.safeParse(json);
  if (parsed.success) return { ok: true, message: parsed.data };
  const issue = parsed.error.issues[0]!;
  const path = issue.path.length > 0 ? issue.path.join('.') : '(body)';
  return { ok: false, reason: `invalid message: ${path}: ${issue.message}` };
}

/** Sample ids of a message's URLs: `u001`, `u002`, … in message order. */
export function sampleIdFor(index: number): string {
  return `u${String(index + 1).padStart(3, '0')}`;
}

/** The run a message's samples belong to: one per job id, so a redelivery lands on the same run. */
export function runIdForJob(jobId: string): string {
  return `q-${jobId}`;
}

/** JSON with object keys sorted, so equal values always give equal text (and equal digests). */
function canonicalJson(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k] as Json)}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/**
 * What a job asks, as a digest: the task (the spec itself, resolved), its URLs in order, its input and
 * its output queue. Results stored under a job id belong to this digest only: a message that reuses
 * the id with another digest must not receive them, nor send them to its own output queue.
 */
export function jobDigest(message: QueueMessage, spec: Json): string {
  const asked: Json = {
    spec,
    urls: message.urls,
    input: message.input ?? {},
    output: message.output?.queueUrl ?? null,
  };
  return createHash('sha256').update(canonicalJson(asked)).digest('hex');
}
