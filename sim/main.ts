/**
 * `judgeflow sim`: run the simulated OpenAI-compatible server until SIGINT/SIGTERM,
 * so the demo and manual runs can point copilots and judges at it.
 */
import { startSimServer, type SimJudgeProfile, type SimOptions } from './server';
import { runStdioWorldServer } from './mcp/stdio';
import { parseFailTools } from './world/tools';

const USAGE = `Usage: judgeflow sim [options]

Runs a local OpenAI-compatible Chat Completions server that plays copilots and judges
deterministically (no network, no API key).

Options:
  --port N              port to listen on (default 8000; 0 = random free port)
  --host H              interface to bind (default 127.0.0.1)
  --latency-ms N        delay added before every reply (default 0)
  --rpm N, --tpm N      rate limit: requests / tokens per minute; above it, 429 with Retry-After
  --rate-429 F          fraction 0..1 of requests answered with HTTP 429
  --rate-500 F          fraction 0..1 of requests answered with HTTP 500
  --rate-malformed F    fraction 0..1 of requests answered with a body that is not valid JSON
  --retry-after N       Retry-After seconds sent with 429s (default 1)
  --seed N              seed for which requests get faults (default 0)
  --judge MODEL:SPEC    a judge model's character, SPEC = comma-separated noise=SD, leniency=POINTS,
                        favour=TEXT, bonus=POINTS, seed=N (e.g. --judge noisy:noise=1.5 --judge fan:favour=Here is,bonus=2);
                        repeatable; judges without one answer identical requests identically
  --batch-seconds S     how long a batch takes from creation to its end (default 3): validating,
                        in_progress, finalizing on the way; its lines answered one by one meanwhile
  --batch-fail-lines N  every Nth line of a batch fails with the provider's server error (500)
  --batch-expire-after N  a batch answers only its first N lines, then expires when its time is up;
                        the rest are reported expired (OpenAI: error file, code batch_expired;
                        Anthropic: result type "expired")
  --fail-tool TOOL=R    make a tool of the simulated world fail: R = always, or N (its first N calls);
                        repeatable; applies to /mcp, /tools/… and --mcp-stdio
  --tool-header 'H: V'  tool requests (/mcp, /tools/…) must carry header H with value V, else 401
                        (repeatable; to check that an agent's tool credentials reach the service)
  --mcp-stdio           serve only the tool world's MCP server, over stdin/stdout (for an agent
                        copilot's \`mcp: [{command: judgeflow, args: [sim, --mcp-stdio]}]\`); no HTTP
  --quiet               do not print a line per request
  -h, --help            show this help

Per-request faults via the model name: fault-429:<m>, fault-500:<m>, fault-malformed:<m>,
fault-badjson:<m>, fault-once-429:<m>. Model names containing "terse", "thorough" or
"refuser" change the copilot's style. The request log is at GET /_sim/requests.
A chat web page for browser copilots is at GET /chat?model=<m> (input #prompt, send #send,
answers .answer, each followed by .answer-done).

Tool-calling copilots: sim-agent and sim-agent-hallucinating (the latter adds one figure no tool
returned) call tools offered in \`tools\` (chat completions and messages), parallel calls in a turn.
The tool world (prices, TVL, funding rates, token unlocks, holder concentration; docs/providers.md):
MCP over Streamable HTTP at /mcp; plain HTTP at /tools/price?symbol=BTC, /tools/tvl?protocol=Aave,
/tools/funding-rate?symbol=, /tools/token-unlocks?token=, /tools/holder-concentration?token=; every
tool call served is listed at GET /_sim/tool-calls.

POST /v1/messages is Anthropic's Messages API, as strict as the real one (400s in its words); faults
fault-529:<m>, fault-429:<m>, fault-500:<m>, fault-credit:<m>; models containing "refusal" or "empty".

POST /v1/responses is OpenAI's Responses API for structured output (instructions, input, text.format
json_schema), answered by the same judge as /v1/chat/completions.

Batch APIs, state in memory: OpenAI's (POST /v1/files with purpose=batch, /v1/batches, output and
error files) and Anthropic's Message Batches (/v1/messages/batches, results_url). Each line is
answered as the live endpoint would answer it; the request log marks it with "batch".
`;

interface CliArgs {
  options: SimOptions;
  quiet: boolean;
  help: boolean;
  mcpStdio?: true;
}

/** Parse `--flag value` and `--flag=value`; throws with a message meant for the user. */
export function parseSimArgs(argv: string[]): CliArgs {
  const args: CliArgs = { options: { port: 8000 }, quiet: false, help: false };
  const faults: NonNullable<SimOptions['faults']> = {};
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = (argv[i] as string).split(/=(.*)/s, 2) as [string, string | undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '-h':
      case '--help':
        args.help = true;
        break;
      case '--quiet':
        args.quiet = true;
        break;
      case '--mcp-stdio':
        args.mcpStdio = true;
        break;
      case '--tool-header': {
        const [name, header] = value().split(/:(.*)/s, 2);
        if (!name?.trim() || header === undefined || !header.trim())
          throw new Error(`--tool-header needs "Name: value", e.g. --tool-header "Authorization: Bearer test"`);
        args.options.toolHeaders = { ...args.options.toolHeaders, [name.trim()]: header.trim() };
        break;
      }
      case '--fail-tool': {
        const [tool, rule] = value().split(/=(.*)/s, 2);
        const parsed = parseFailTools(
          JSON.stringify({
            [tool]: rule === 'always' ? rule : rule !== undefined && /^\d+$/.test(rule) ? Number(rule) : (rule ?? ''),
          }),
          '--fail-tool',
        );
        args.options.failTools = { ...args.options.failTools, ...parsed };
        break;
      }
      case '--host':
        args.options.host = value();
        break;
      case '--port':
        args.options.port = integer(flag, value(), 0, 65535);
        break;
      case '--latency-ms':
        args.options.latencyMs = integer(flag, value(), 0, 600_000);
        break;
      case '--rate-429':
        faults.rate429 = fraction(flag, value());
        break;
      case '--rate-500':
        faults.rate500 = fraction(flag, value());
        break;
      case '--rate-malformed':
        faults.rateMalformed = fraction(flag, value());
        break;
      case '--retry-after':
        faults.retryAfterSeconds = integer(flag, value(), 0, 3600);
        break;
      case '--rpm':
        (args.options.rateLimit ??= {}).requestsPerMinute = integer(flag, value(), 1, 10_000_000);
        break;
      case '--tpm':
        (args.options.rateLimit ??= {}).tokensPerMinute = integer(flag, value(), 1, 1_000_000_000);
        break;
      case '--batch-seconds':
        args.options.batchSeconds = seconds(flag, value());
        break;
      case '--batch-fail-lines':
        args.options.batchFailLines = integer(flag, value(), 1, 1_000_000);
        break;
      case '--batch-expire-after':
        args.options.batchExpireAfterLines = integer(flag, value(), 0, 1_000_000);
        break;
      case '--seed':
        faults.seed = integer(flag, value(), 0, Number.MAX_SAFE_INTEGER);
        break;
      case '--judge': {
        const [model, profile] = judgeProfile(value());
        args.options.judges = { ...args.options.judges, [model]: profile };
        break;
      }
      default:
        throw new Error(`unknown option ${flag}`);
    }
  }
  if (Object.keys(faults).length > 0) args.options.faults = faults;
  return args;
}

/** `MODEL:noise=1.5,leniency=-1,favour=TEXT,bonus=2,seed=3` → the model name and its SimJudgeProfile. */
function judgeProfile(text: string): [string, SimJudgeProfile] {
  const colon = text.indexOf(':');
  if (colon < 1) throw new Error(`--judge needs MODEL:SPEC (e.g. noisy-judge:noise=1.5), got "${text}"`);
  const profile: SimJudgeProfile = {};
  let favour: string | undefined;
  let bonus = 0;
  for (const part of text.slice(colon + 1).split(',')) {
    const [key, raw = ''] = part.split(/=(.*)/s, 2);
    const number = () => {
      const n = Number(raw);
      if (!Number.isFinite(n)) throw new Error(`--judge ${key} must be a number, got "${raw}"`);
      return n;
    };
    if (key === 'noise') profile.noise = Math.abs(number());
    else if (key === 'leniency') profile.leniency = number();
    else if (key === 'seed') profile.seed = number();
    else if (key === 'bonus') bonus = number();
    else if (key === 'favour') favour = raw;
    else throw new Error(`--judge: unknown setting "${key}" (noise, leniency, favour, bonus, seed)`);
  }
  if (favour) profile.favour = { contains: favour, bonus };
  return [text.slice(0, colon), profile];
}

function integer(flag: string, text: string, min: number, max: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`${flag} must be an integer between ${min} and ${max}, got "${text}"`);
  return n;
}

function seconds(flag: string, text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0 || n > 86_400)
    throw new Error(`${flag} must be a number of seconds between 0 and 86400, got "${text}"`);
  return n;
}

function fraction(flag: string, text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new Error(`${flag} must be a number between 0 and 1, got "${text}"`);
  return n;
}

/** Returns the process exit code: 0 after a clean shutdown or --help, 2 on bad arguments. */
export async function runSimCli(argv: string[]): Promise<number> {
  let args: CliArgs;
  try {
    args = parseSimArgs(argv);
  } catch (error) {
    process.stderr.write(`judgeflow sim: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (args.mcpStdio) return serveMcpStdio(args.options);
  if (!args.quiet) {
    args.options.onRequest = (entry) =>
      process.stdout.write(
        `${new Date(entry.at).toISOString()} ${entry.path} model=${entry.model || '-'}${entry.batch ? ` batch=${entry.batch.id} line=${entry.batch.customId}` : ''}\n`,
      );
  }
  const server = await startSimServer(args.options);
  process.stdout.write(`judgeflow sim listening on ${server.url}\n`);
  const origin = server.url.replace(/\/v1$/, '');
  process.stdout.write(
    `judgeflow sim tools: MCP (Streamable HTTP) at ${origin}/mcp, HTTP at ${origin}/tools/price?symbol=BTC (and tvl, funding-rate, token-unlocks, holder-concentration), calls listed at ${origin}/_sim/tool-calls\n`,
  );
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    const stop = (received: NodeJS.Signals) => {
      // Drop both listeners so a second Ctrl-C falls back to Node's default (immediate exit).
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(received);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  process.stdout.write(`judgeflow sim: ${signal} received, shutting down after ${server.requests.length} requests\n`);
  await server.close();
  return 0;
}

/** --mcp-stdio: the tool world over stdin/stdout until the client closes stdin; stdout is the protocol's, so nothing else is printed. */
async function serveMcpStdio(options: SimOptions): Promise<number> {
  const env = options.failTools
    ? { ...process.env, JUDGEFLOW_SIM_FAIL_TOOLS: JSON.stringify(options.failTools) }
    : process.env;
  const closed = new Promise<void>((resolve) => process.stdin.once('close', resolve).once('end', resolve));
  await runStdioWorldServer(env);
  await closed;
  return 0;
}

if (require.main === module) {
  runSimCli(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`judgeflow sim: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
