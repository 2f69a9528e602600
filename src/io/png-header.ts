/**
 * A PNG's header (IHDR) read without decoding it (no Node or DOM dependency): the size a
 * decoder would allocate is known, and checked, before it allocates anything.
 */

export interface PngHeader {
  readonly width: number;
  readonly height: number;
  readonly bitDepth: number;
  /** 0 grey, 2 RGB, 3 palette, 4 grey + alpha, 6 RGBA. */
  readonly colorType: number;
}

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** The IHDR of PNG bytes; `what` names the file in errors. */
export function pngHeader(bytes: Uint8Array, what: string): PngHeader {
  if (bytes.length < 33 || SIGNATURE.some((b, i) => bytes[i] !== b))
    throw new Error(`${what} is not a readable PNG (it has no PNG signature); give an 8-bit PNG file.`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const type = String.fromCharCode(...bytes.subarray(12, 16));
  if (type !== "IHDR")
    throw new Error(
      `${what} is not a readable PNG (its first chunk is ${JSON.stringify(type)}, not IHDR); the file is corrupt.`,
    );
  const width = view.getUint32(16),
    height = view.getUint32(20),
    bitDepth = bytes[24]!,
    colorType = bytes[25]!;
  if (width === 0 || height === 0)
    throw new Error(`${what}: the PNG says it is ${width}×${height}; an image needs a positive width and height.`);
  return { width, height, bitDepth, colorType };
}

const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/** Bytes a decoder to 8-bit RGBA allocates for this PNG: the inflated scanlines and the RGBA image. */
export function pngDecodedBytes(h: PngHeader): number {
  const scanlines = h.height * (1 + Math.ceil((h.width * (CHANNELS[h.colorType] ?? 4) * h.bitDepth) / 8));
  return scanlines + h.width * h.height * 4;
}
