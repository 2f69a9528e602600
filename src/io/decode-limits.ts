/**
 * The bound on memory a decoder may allocate for one file (no Node or DOM dependency). A few
 * hundred bytes of PNG or GIF can claim a 30000×30000 image or thousands of full-size frames:
 * each reader computes what decoding would allocate from the file's header, before decoding,
 * and refuses a file over the bound instead of exhausting memory (in a web page, the tab).
 */

/** Default bound on the bytes a decoder allocates for one file: 1 GiB. */
export const DEFAULT_MAX_DECODED_BYTES = 2 ** 30;

/** Options of the readers that take the bound. */
export interface DecodeLimits {
  /**
   * Most bytes decoding one file may allocate (default 1 GiB, or the environment variable
   * GRADSIM_MAX_DECODED_BYTES where there is a process environment).
   */
  readonly maxDecodedBytes?: number;
}

/** The bound in effect for `o`: the option, else GRADSIM_MAX_DECODED_BYTES, else 1 GiB. */
export function maxDecodedBytes(o: DecodeLimits = {}): number {
  const fromEnv = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env
    ?.GRADSIM_MAX_DECODED_BYTES;
  const v =
    o.maxDecodedBytes ?? (fromEnv !== undefined && fromEnv !== "" ? Number(fromEnv) : DEFAULT_MAX_DECODED_BYTES);
  if (!(Number.isFinite(v) && v > 0)) {
    const got =
      o.maxDecodedBytes !== undefined ? o.maxDecodedBytes : `GRADSIM_MAX_DECODED_BYTES=${JSON.stringify(fromEnv)}`;
    throw new Error(`maxDecodedBytes must be a positive number of bytes, got ${got}.`);
  }
  return v;
}

const size = (b: number) =>
  b >= 2 ** 30
    ? `${(b / 2 ** 30).toFixed(1)} GiB`
    : b >= 2 ** 20
      ? `${(b / 2 ** 20).toFixed(1)} MiB`
      : `${Math.ceil(b / 1024)} KiB`;

/** Throw if `bytes` (what decoding `what` — described by `needs` — allocates) exceeds the bound. */
export function checkDecodedBytes(what: string, needs: string, bytes: number, o: DecodeLimits = {}): void {
  const limit = maxDecodedBytes(o);
  if (bytes <= limit) return;
  throw new Error(
    `${what}: decoding it needs ${size(bytes)} (${needs}), more than the limit of ${size(limit)}. ` +
      "A file this large is usually corrupt or made to exhaust " +
      "memory; if it is genuine, raise the limit with the option " +
      "{ maxDecodedBytes: bytes } or the environment variable " +
      "GRADSIM_MAX_DECODED_BYTES (or read fewer frames / a smaller crop).",
  );
}
