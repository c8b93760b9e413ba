/** The AWS cost model shared by bench:runs and bench:fanout: us-east-1 list prices and per-sample usage. */
import { round, table } from './report.ts';

export const AWS = {
  memoryGb: 2, // Chromium wants 1.5–2 GB on Lambda
  lambdaGbSecond: 0.0000166667, // x86, us-east-1
  lambdaRequest: 0.2 / 1e6,
  coldStartMs: 1500, // unpacking Chromium + launch, amortised below
  samplesPerWarmContainer: 50,
  transition: 0.025 / 1000, // Standard workflows
  ddbWrite: 0.625 / 1e6, // on-demand write request unit
  ddbWrites: 5, // sample running, checkpoint, result (conditional), sample final, rate bucket
  ddbRead: 0.125 / 1e6,
  ddbReads: 7, // result?, run, sample, checkpoint, spec, host pause, result after
  s3Put: 0.005 / 1000,
  s3Puts: 3, // screenshot, action log, checkpoint body when over the item limit
  s3Get: 0.0004 / 1000,
};

/** Cost of one sample on AWS before model cost, by part, from the measured per-sample time. */
export function sampleCostLines(sampleMs: number, slicesPerSample: number): [string, number, string][] {
  const a = AWS;
  // Per sample in the Distributed Map child: start, Slice, Sample ended?, Sample done (+ 2 per extra slice).
  const transitions = 4 + 2 * Math.max(0, slicesPerSample - 1);
  const seconds = (sampleMs + a.coldStartMs / a.samplesPerWarmContainer) / 1000;
  return [
    [
      'Lambda compute',
      seconds * a.memoryGb * a.lambdaGbSecond,
      `${round(seconds, 2)} s × ${a.memoryGb} GB at $${a.lambdaGbSecond}/GB-s`,
    ],
    [
      'Lambda requests',
      slicesPerSample * a.lambdaRequest,
      `${round(slicesPerSample, 2)} slice invocations/sample at $0.20/M`,
    ],
    [
      'Step Functions',
      transitions * a.transition,
      `${transitions} transitions/sample at $0.025/1k (Standard)`,
    ],
    [
      'DynamoDB',
      a.ddbWrites * a.ddbWrite + a.ddbReads * a.ddbRead,
      `${a.ddbWrites} writes + ${a.ddbReads} reads/sample, on demand`,
    ],
    ['S3', a.s3Puts * a.s3Put + 2 * a.s3Get, `${a.s3Puts} PUTs + 2 GETs/sample (merge, report)`],
  ];
}

/** AWS cost per 1,000 pages before model cost, from the measured per-sample time. */
export function awsCost(sampleMs: number, slicesPerSample: number): string {
  const lines = sampleCostLines(sampleMs, slicesPerSample).map(
    ([part, usd, why]) => [part, usd * 1000, why] as const,
  );
  const total = lines.reduce((n, l) => n + l[1], 0);
  return [
    '\nestimated AWS cost per 1,000 pages (model cost excluded; us-east-1 list prices):',
    table([
      ['part', 'USD', 'assumption'],
      ...lines.map(([a, b, c]) => [a, round(b, 4), c]),
      [
        'total',
        round(total, 4),
        `sample time ${round(sampleMs)} ms measured here (p50, one sample per slice)`,
      ],
    ]),
  ].join('\n');
}
