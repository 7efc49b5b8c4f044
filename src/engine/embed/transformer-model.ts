import type { Embedder } from './embedder';

/**
 * A transformer embedding model (BERT-shaped ONNX: input_ids, attention_mask, token_type_ids →
 * last_hidden_state) through transformers.js's feature-extraction pipeline, mean-pooled and
 * normalised. Loaded from a local folder only: the hub is never contacted from here.
 */
type FeatureExtractor = (
  texts: string[],
  options: { pooling: 'mean'; normalize: boolean },
) => Promise<{ data: Float32Array; dims: number[] }>;

const BATCH_SIZE = 16;
const MAX_CHARACTERS = 4000;

export class TransformerModel implements Embedder {
  readonly kind = 'transformer' as const;

  private constructor(
    readonly id: string,
    readonly dimensions: number,
    private readonly extractor: FeatureExtractor & { dispose?: () => Promise<void> },
  ) {}

  static async load(directory: string, id: string): Promise<TransformerModel> {
    const { pipeline, env } = await importTransformers();
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = '';
    const extractor = (await pipeline('feature-extraction', directory, {
      dtype: 'fp32',
      local_files_only: true,
    })) as unknown as FeatureExtractor;
    const probe = await extractor(['dimension probe'], { pooling: 'mean', normalize: true });
    return new TransformerModel(id, probe.dims[probe.dims.length - 1]!, extractor);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += BATCH_SIZE) {
      const batch = texts.slice(i, i + BATCH_SIZE).map((text) => text.slice(0, MAX_CHARACTERS));
      const result = await this.extractor(batch, { pooling: 'mean', normalize: true });
      for (let row = 0; row < batch.length; row++) {
        out.push(result.data.slice(row * this.dimensions, (row + 1) * this.dimensions));
      }
    }
    return out;
  }

  dispose(): void {
    void this.extractor.dispose?.();
  }
}

/**
 * transformers.js, which the packaged extension leaves out (with ONNX Runtime it adds 25 MB): the
 * error says what to do instead of showing a module path.
 */
async function importTransformers(): Promise<typeof import('@huggingface/transformers')> {
  try {
    return await import('@huggingface/transformers');
  } catch (cause) {
    if (
      (cause as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND' &&
      (cause as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND'
    )
      throw cause;
    throw new Error(
      'transformer embedding models need transformers.js and ONNX Runtime, which this build of Code Oracle leaves out; use a Model2Vec model (the default) or the command-line tool installed from npm',
      { cause },
    );
  }
}
