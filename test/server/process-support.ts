import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { after } from 'node:test';
import { PACKAGE_ROOT } from '../../server/paths.js';
import { API } from './support.js';

/** `forge-service` as an operator runs it: server/main.ts, as its own process. */
export const MAIN = join(PACKAGE_ROOT, 'main.ts');

const launched = new Set<ChildProcess>();
after(() => {
  for (const child of launched) child.kill('SIGKILL');
});

/**
 * `forge-service` with `env` (and Node's own `nodeArgs` before its file); resolves once it
 * listens, with its URL and everything it wrote. Killed when the test file ends.
 */
export async function launch(env: Record<string, string>, args: string[] = [], nodeArgs: string[] = []) {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', MAIN, ...args], {
    cwd: PACKAGE_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  launched.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', () => {
      const found = /listening on (http:\/\/[^/"]+)/.exec(stdout);
      if (found) resolve(found[1]!);
    });
    child.once('exit', (code) => reject(new Error(`forge-service exited with ${code}:\n${stdout}${stderr}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, url, exited, stdout: () => stdout, stderr: () => stderr };
}

/** A call to the running process's API with a credential (the API key or a user token). */
export async function call(url: string, method: string, path: string, credential: string, body?: unknown) {
  const response = await fetch(`${url}${API}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${credential}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  // biome-ignore lint/suspicious/noExplicitAny: tests read the answers field by field and check them.
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as any };
}

/** Every line of a process's log, each parsed as the one JSON object it must be. */
export function jsonLines(output: string): Array<Record<string, unknown>> {
  return output
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON line: ${line}`);
      }
    });
}
