/** Kept apart from worker.ts so `browserfn --help` does not load the AWS SDK. */
export const WORKER_USAGE = 'browserfn worker --queue <url> [--dlq <url>] [--idle N]';
