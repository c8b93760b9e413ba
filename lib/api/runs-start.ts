/**
 * The body of `POST /v1/runs`: its schema (also in /openapi.json) and what it asks for — a spec with
 * its samples (a list or CSV text), or a prompt to plan them from (pure).
 */
import { z } from 'zod';
import { type Sample, SamplesError, samplesFromCsv, samplesFromList } from '../runs/samples.ts';
import { parseTaskSpec, SpecError, type TaskSpec } from '../runs/task-spec.ts';

export const StartBody = z
  .object({
    spec: z.record(z.string(), z.unknown()).optional(),
    samples: z
      .array(
        z.object({
          sample_id: z.string().optional(),
          sampleId: z.string().optional(),
          url: z.string(),
          input: z.record(z.string(), z.string()).optional(),
        }),
      )
      .optional(),
    csv: z.string().optional().describe('CSV text with a header "sample_id,url,…"'),
    prompt: z.string().min(1).optional().describe('plan the spec and samples from plain language'),
    model: z.string().optional(),
    concurrency: z.number().int().min(1).max(1000).optional(),
  })
  .strict();

export function parseStart(
  body: z.infer<typeof StartBody>,
): { spec: TaskSpec; samples: Sample[] } | { prompt: string } {
  if (body.prompt) {
    if (body.spec || body.samples || body.csv)
      throw new SpecError('give either prompt, or spec with samples/csv');
    return { prompt: body.prompt };
  }
  if (!body.spec)
    throw new SpecError('spec: required (or give prompt)', [{ path: 'spec', message: 'required' }]);
  const spec = parseTaskSpec({
    ...body.spec,
    ...(body.model ? { model: body.model } : {}),
    ...(body.concurrency ? { concurrency: body.concurrency } : {}),
  });
  // A file path would read this server's disk on the caller's behalf.
  if (spec.authProfile?.file)
    throw new SpecError(
      'spec.authProfile.file: not accepted over the API; store the profile and give its key',
      [{ path: 'spec.authProfile.file', message: 'not accepted over the API' }],
    );
  if ((body.samples ? 1 : 0) + (body.csv !== undefined ? 1 : 0) !== 1)
    throw new SamplesError('give the samples as either "samples" (a list) or "csv" (text)');
  const samples = body.csv !== undefined ? samplesFromCsv(body.csv, 'csv') : samplesFromList(body.samples!);
  return { spec, samples };
}
