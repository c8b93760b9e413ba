/**
 * What a job message on the queue says: which task (inline, or a spec stored earlier) over which URLs.
 * One zod schema is the type, the validator and the documented shape.
 */
import { z } from 'zod';

const HttpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:/i.test(u), 'must be an http(s) URL');

export const QueueMessageSchema = z
  .object({
    /** Idempotency key: redeliveries and resends with the same id never produce a second result. */
    jobId: z.string().min(1).max(200).optional().describe('idempotency key; defaults to the SQS message id'),
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
