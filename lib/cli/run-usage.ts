/** Usage lines of the run commands, apart from their code so `browserfn --help` loads nothing heavy. */
export const RUN_USAGE =
  'browserfn run --task spec.json (--input samples.csv | --url URL) [--concurrency N] [--model M] [--out DIR]\n' +
  '       browserfn run --prompt "…" [--concurrency N] [--out DIR]\n' +
  '       browserfn run --resume RUN_ID [--concurrency N] [--out DIR]';
export const REPORT_USAGE = 'browserfn report <run-id> [--out DIR]';
export const VERIFY_USAGE = 'browserfn verify <run-id> [--head HEX] [--out DIR]';
