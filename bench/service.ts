import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const SERVICE_MAIN = fileURLToPath(new URL('../server/dist/main.js', import.meta.url));
const FLOOR_MAIN = fileURLToPath(new URL('floor-service.mjs', import.meta.url));

export const API_PREFIX = '/forge/2021-12';

/** A key in the service's API-key shape (at least 32 random characters after the prefix), made fresh for each run. */
export const newApiKey = () => `forge_sk_bench${randomBytes(24).toString('base64url')}`;

export interface ServiceProcess {
  /** `http://localhost:<port>`, the origin the elements are given as api-base. */
  url: string;
  /** The same service on the loopback address, for Node clients (skips resolving localhost). */
  loopbackUrl: string;
  /** CPU time the service process has used so far, in ms; undefined where Linux's /proc is not. */
  cpuMs(): number | undefined;
  /** The service's process id (for a profiler such as `perf record -p`). */
  pid: number;
  /** Calls the service with the API key, as a host backend does. */
  hostApi<T>(method: string, path: string, body?: unknown): Promise<T>;
  stop(): Promise<void>;
}

/**
 * Starts the built service (`server/dist/main.js`) as its own process, so that what is measured
 * is the service alone and not the bench that drives it. Port 0 lets the service pick a free port,
 * which it prints.
 */
export async function spawnService(options: {
  db: string;
  apiKey: string;
  catalog?: string;
  allowedOrigins?: string[];
  /** Another build's `main.js` (an earlier commit's, to compare with); default this build's. */
  main?: string;
  /** Extra environment, such as `FORGE_LOG=off`. */
  env?: Record<string, string>;
  /** Node's own options, before the service's file, such as `--cpu-prof`. */
  nodeOptions?: string[];
  /**
   * Where the service's stdout (its log) goes: this file, as a deployment that logs to a file
   * does, rather than a pipe the bench drains between its own requests. Default the pipe.
   */
  logFile?: string;
}): Promise<ServiceProcess> {
  const args = [...(options.nodeOptions ?? []), options.main ?? SERVICE_MAIN, '--port', '0', '--db', options.db];
  if (options.catalog) args.push('--catalog', options.catalog);
  const child = spawn(process.execPath, args, {
    env: {
      ...process.env,
      FORGE_API_KEY: options.apiKey,
      FORGE_ALLOWED_ORIGINS: (options.allowedOrigins ?? []).join(','),
      // The heap phase opens the modal hundreds of times a minute for one user, each with a
      // fresh token: far past what a person does, and past the per-user token limit.
      FORGE_RATE_LIMITS: 'token=off',
      ...options.env,
    },
    stdio: ['ignore', options.logFile ? openSync(options.logFile, 'w') : 'pipe', 'pipe'],
  });
  const listening = /listening on (http:\/\/\S+?)\/forge\//;
  const url = options.logFile
    ? await listeningUrlInFile(child, options.logFile, listening)
    : await listeningUrl(child, 'The service', listening);
  const loopbackUrl = url.replace('//localhost:', '//127.0.0.1:');
  return {
    url,
    loopbackUrl,
    pid: child.pid!,
    cpuMs: () => cpuMsOf(child.pid!),
    async hostApi<T>(method: string, path: string, body?: unknown) {
      const response = await fetch(`${loopbackUrl}${API_PREFIX}${path}`, {
        method,
        headers: { Authorization: `Bearer ${options.apiKey}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
      return JSON.parse(text) as T;
    },
    stop: () => stopProcess(child),
  };
}

function cpuMsOf(pid: number): number | undefined {
  try {
    // utime and stime, the 14th and 15th fields, in clock ticks (10 ms on Linux); the process
    // name before them is in parentheses and may hold spaces.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** The floor (`floor-service.mjs`): a bare Fastify route, its own process, the same Node as the service. */
export interface FloorProcess {
  /** The floor's route: `http://127.0.0.1:<port>/floor`. */
  url: string;
  cpuMs(): number | undefined;
  /** The floor's process id (for a profiler such as `perf record -p`). */
  pid: number;
  stop(): Promise<void>;
}

/** `nodeOptions`: Node's own options before the floor's file, as for spawnService. */
export async function spawnFloor(nodeOptions: string[] = []): Promise<FloorProcess> {
  const child = spawn(process.execPath, [...nodeOptions, FLOOR_MAIN], { stdio: ['ignore', 'pipe', 'pipe'] });
  const origin = await listeningUrl(child, 'The floor', /floor listening on (http:\/\/\S+)/);
  return {
    url: `${origin}/floor`,
    cpuMs: () => cpuMsOf(child.pid!),
    pid: child.pid!,
    stop: () => stopProcess(child),
  };
}

function listeningUrl(child: ChildProcess, name: string, listening: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`${name} did not start within 60 s. Its output:\n${output}`));
    }, 60_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const match = listening.exec(output);
      if (match) {
        clearTimeout(timer);
        // From here on the output (the request log) is drained, not kept: scanning a growing
        // log on every chunk would cost the bench more than the service.
        child.stdout!.off('data', read);
        child.stderr!.off('data', read);
        child.stdout!.resume();
        child.stderr!.resume();
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (code ${code}) before it listened. Its output:\n${output}`));
    });
  });
}

/** The same for a service whose stdout is a file: the file is read until it says where the service listens. */
async function listeningUrlInFile(child: ChildProcess, file: string, listening: RegExp): Promise<string> {
  const started = Date.now();
  while (Date.now() - started < 60_000) {
    if (child.exitCode !== null)
      throw new Error(`The service exited (code ${child.exitCode}): ${readFileSync(file, 'utf8')}`);
    const match = listening.exec(readFileSync(file, 'utf8'));
    if (match) return match[1]!;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill();
  throw new Error(`The service did not start within 60 s. Its log:\n${readFileSync(file, 'utf8')}`);
}

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
