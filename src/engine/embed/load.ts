import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { getLogger, elapsedMs } from '../log/logger';
import { describeError, fail, ok, type Result } from '../util/result';
import type { Embedder, ModelRequest } from './embedder';
import { ensureHubModel } from './hub';
import { StaticModel } from './static-model';
import { TransformerModel } from './transformer-model';

/**
 * Resolves the requested model to a loaded embedder, or explains why there is none: the index
 * is then built lexical-only and the status carries the reason instead of failing silently.
 */
export interface ModelLoadOptions {
  /** Where downloaded models are cached. */
  readonly cacheRoot: string;
  readonly hubUrl?: string;
  /** A model folder shipped with the project, loaded when a hub model cannot be downloaded. */
  readonly offlineFallback?: string | null;
}

/** The model the index uses and, when it is not the one asked for, why. */
export interface LoadedModel {
  readonly embedder: Embedder | null;
  readonly note: string | null;
}

/** The small model shipped in the repository and the VSIX (models/potion-base-2M, MIT). */
export const BUNDLED_MODEL_NAME = 'potion-base-2M';

const log = getLogger('embed.load');

export async function loadEmbedder(
  request: ModelRequest,
  options: ModelLoadOptions,
): Promise<Result<Embedder | null>> {
  if (request.kind === 'none') return ok(null);
  const started = performance.now();
  let directory: string;
  let id: string;
  if (request.kind === 'hub') {
    const downloaded = await ensureHubModel(request.repo, options.cacheRoot, options.hubUrl);
    if (!downloaded.ok) return downloaded;
    directory = downloaded.value;
    id = request.repo;
  } else {
    directory = path.resolve(request.path);
    id = path.basename(directory);
  }
  const kind = await modelKind(directory);
  if (!kind.ok) return kind;
  try {
    const embedder =
      kind.value === 'static'
        ? await StaticModel.load(directory, id)
        : await TransformerModel.load(directory, id);
    log.info('embedding_model_loaded', {
      model: id,
      kind: embedder.kind,
      dimensions: embedder.dimensions,
      directory,
      duration_ms: elapsedMs(started),
    });
    return ok(embedder);
  } catch (cause) {
    const reason = describeError(cause);
    log.warn('embedding_model_failed', { model: id, directory, error: reason });
    return fail(
      'model_unavailable',
      `The embedding model in ${directory} could not be loaded: ${reason}`,
    );
  }
}

/**
 * Loads the requested model; when it is a hub model that cannot be downloaded (offline, blocked
 * network) and a shipped model exists, loads that one instead and says why in `note`.
 */
export async function loadModel(
  request: ModelRequest,
  options: ModelLoadOptions,
): Promise<Result<LoadedModel>> {
  const loaded = await loadEmbedder(request, options);
  if (loaded.ok) return ok({ embedder: loaded.value, note: null });
  if (request.kind !== 'hub' || !options.offlineFallback) return loaded;
  const fallback = await loadEmbedder(
    { kind: 'directory', path: options.offlineFallback },
    options,
  );
  if (!fallback.ok) {
    log.warn('offline_fallback_failed', {
      directory: options.offlineFallback,
      error: fallback.error.message,
    });
    return loaded;
  }
  const fallbackName = path.basename(options.offlineFallback);
  const note = `could not download ${shortName(request.repo)} (${loaded.error.message}), so the index uses the bundled ${fallbackName}, a smaller model; it switches to ${shortName(request.repo)} once a download succeeds`;
  log.warn('embedding_offline_fallback', { requested: request.repo, used: fallbackName });
  return ok({ embedder: fallback.value, note });
}

function shortName(repo: string): string {
  return repo.split('/').pop() ?? repo;
}

/**
 * Where the shipped model is: `models/` at the project root, which is one level above the bundles
 * (dist/) in the VSIX and the CLI, and three above this file when the sources run directly.
 */
export function bundledModelDirectory(from: string = __dirname): string | null {
  const candidates = [path.join(from, '..'), path.join(from, '..', '..', '..')].map((root) =>
    path.join(root, 'models', BUNDLED_MODEL_NAME),
  );
  return (
    candidates.find((candidate) => existsSync(path.join(candidate, 'model.safetensors'))) ?? null
  );
}

/** A Model2Vec folder has model.safetensors and a model2vec config; a transformer has onnx/model.onnx. */
async function modelKind(directory: string): Promise<Result<'static' | 'transformer'>> {
  const exists = (file: string) =>
    fs.stat(path.join(directory, file)).then(
      () => true,
      () => false,
    );
  if (!(await exists('.')))
    return fail('model_unavailable', `The embedding model folder does not exist: ${directory}`);
  if (await exists('onnx/model.onnx')) return ok('transformer');
  if (await exists('model.safetensors')) {
    try {
      const config = JSON.parse(await fs.readFile(path.join(directory, 'config.json'), 'utf8')) as {
        model_type?: string;
      };
      if (config.model_type && config.model_type !== 'model2vec') {
        return fail(
          'model_unavailable',
          `${directory} holds a ${config.model_type} model without an ONNX export (onnx/model.onnx)`,
        );
      }
    } catch (cause) {
      return fail(
        'model_unavailable',
        `${directory}/config.json is missing or invalid: ${describeError(cause)}`,
      );
    }
    return ok('static');
  }
  return fail(
    'model_unavailable',
    `${directory} has neither model.safetensors (Model2Vec) nor onnx/model.onnx (transformer)`,
  );
}
