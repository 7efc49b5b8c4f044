import { endianness } from 'node:os';
import { z } from 'zod';

const LITTLE_ENDIAN = endianness() === 'LE';

/** Reads the tensors of a .safetensors file: an 8-byte header length, a JSON header, raw data. */
const TensorInfo = z.object({
  dtype: z.string(),
  shape: z.array(z.number().int().nonnegative()),
  data_offsets: z.tuple([z.number().int(), z.number().int()]),
});

export interface Tensor {
  readonly shape: readonly number[];
  /** Values converted to float32. */
  readonly data: Float32Array;
}

export function readSafetensors(buffer: Uint8Array): Map<string, Tensor> {
  if (buffer.length < 8) throw new Error('safetensors file is truncated');
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  if (8 + headerLength > buffer.length)
    throw new Error('safetensors header is longer than the file');
  const header = JSON.parse(
    new TextDecoder().decode(buffer.subarray(8, 8 + headerLength)),
  ) as Record<string, unknown>;
  const base = 8 + headerLength;
  const tensors = new Map<string, Tensor>();
  for (const [name, raw] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const info = TensorInfo.parse(raw);
    const [start, end] = info.data_offsets;
    if (base + end > buffer.length)
      throw new Error(`tensor ${name} extends past the end of the file`);
    tensors.set(name, {
      shape: info.shape,
      data: toFloat32(info.dtype, buffer.subarray(base + start, base + end)),
    });
  }
  return tensors;
}

function toFloat32(dtype: string, bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (dtype) {
    case 'F32': {
      // Safetensors are little-endian: on such hosts a byte copy (into an aligned buffer) is the conversion.
      if (LITTLE_ENDIAN) return new Float32Array(new Uint8Array(bytes).buffer);
      const out = new Float32Array(bytes.byteLength / 4);
      for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
      return out;
    }
    case 'F16': {
      const out = new Float32Array(bytes.byteLength / 2);
      for (let i = 0; i < out.length; i++) out[i] = halfToFloat(view.getUint16(i * 2, true));
      return out;
    }
    case 'I64': {
      const out = new Float32Array(bytes.byteLength / 8);
      for (let i = 0; i < out.length; i++) out[i] = Number(view.getBigInt64(i * 8, true));
      return out;
    }
    case 'I32': {
      const out = new Float32Array(bytes.byteLength / 4);
      for (let i = 0; i < out.length; i++) out[i] = view.getInt32(i * 4, true);
      return out;
    }
    default:
      throw new Error(`unsupported tensor dtype ${dtype}`);
  }
}

function halfToFloat(half: number): number {
  const sign = half & 0x8000 ? -1 : 1;
  const exponent = (half >> 10) & 0x1f;
  const fraction = half & 0x03ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 0x1f) return fraction ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}
