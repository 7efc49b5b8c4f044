import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { getLogger, elapsedMs } from '../log/logger';
import { describeError, fail, ok, type Result } from '../util/result';

/**
 * Downloads a model folder from a Hugging Face-style hub (`{base}/{repo}/resolve/main/{file}`)
 * into a local cache, atomically: files land in a temporary folder renamed into place only when
 * all of them arrived, so an interrupted download never looks like a model.
 */
export const DEFAULT_HUB_URL = 'https://huggingface.co';
const MODEL_FILES = ['config.json', 'tokenizer.json', 'model.safetensors'];
const OPTIONAL_FILES = ['tokenizer_config.json'];
/** The first, small file answers quickly when a hub is reachable; a blocked network should not stall. */
const PROBE_TIMEOUT_MS = 10_000;
const DOWNLOAD_TIMEOUT_MS = 5 * 60_000;

const log = getLogger('embed.hub');

export function cachedModelDirectory(cacheRoot: string, repo: string): string {
  return path.join(cacheRoot, 'models', repo.replace(/[^\w.-]+/g, '__'));
}

export async function ensureHubModel(
  repo: string,
  cacheRoot: string,
  hubUrl = DEFAULT_HUB_URL,
): Promise<Result<string>> {
  const target = cachedModelDirectory(cacheRoot, repo);
  if (await hasModelFiles(target)) return ok(target);
  const started = performance.now();
  const temporary = `${target}.download-${process.pid}`;
  log.info('model_download_started', { repo, hub_url: hubUrl, target });
  try {
    await fs.rm(temporary, { recursive: true, force: true });
    await fs.mkdir(temporary, { recursive: true });
    for (const [index, file] of MODEL_FILES.entries()) {
      await download(
        `${hubUrl}/${repo}/resolve/main/${file}`,
        path.join(temporary, file),
        true,
        index === 0 ? PROBE_TIMEOUT_MS : DOWNLOAD_TIMEOUT_MS,
      );
    }
    for (const file of OPTIONAL_FILES)
      await download(
        `${hubUrl}/${repo}/resolve/main/${file}`,
        path.join(temporary, file),
        false,
        PROBE_TIMEOUT_MS,
      );
    await fs.rm(target, { recursive: true, force: true });
    await fs.rename(temporary, target);
    log.info('model_download_completed', { repo, target, duration_ms: elapsedMs(started) });
    return ok(target);
  } catch (cause) {
    await fs.rm(temporary, { recursive: true, force: true }).catch(() => undefined);
    const reason = describeError(cause);
    log.warn('model_download_failed', { repo, hub_url: hubUrl, error: reason });
    return fail(
      'model_unavailable',
      `Could not download the embedding model ${repo} from ${hubUrl}: ${reason}`,
    );
  }
}

async function hasModelFiles(directory: string): Promise<boolean> {
  const present = await Promise.all(
    MODEL_FILES.map((file) =>
      fs.stat(path.join(directory, file)).then(
        () => true,
        () => false,
      ),
    ),
  );
  return present.every(Boolean);
}

async function download(
  url: string,
  destination: string,
  required: boolean,
  timeoutMs: number,
): Promise<void> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' });
  if (!response.ok) {
    if (!required && response.status === 404) return;
    throw new Error(`GET ${url} answered ${response.status} ${response.statusText}`);
  }
  await fs.writeFile(destination, Buffer.from(await response.arrayBuffer()));
}
