/** One usage line per op command: shown by `--help` and after a usage error. */
const COMMON = '[--model provider/model] [--selector S] [--vision fallback|always|never] [--budget TOKENS]';
export const ACT_USAGE = `browserfn act <url|file> "<instruction>" [--var name=value]… [--no-cache] ${COMMON}`;
export const OBSERVE_USAGE = `browserfn observe <url|file> ["<instruction>"] ${COMMON}`;
export const EXTRACT_USAGE = `browserfn extract <url|file> ["<instruction>"] [--schema file.json] ${COMMON}`;
export const SNAPSHOT_USAGE =
  'browserfn snapshot <url|file> [--selector S] [--budget TOKENS] [--chunk N] [--som out.png] [--json]';
