/**
 * Parameter checkpoints: a pytree of float Arrays (nested records and lists) as bytes, and back.
 *
 * Format (version 1), little-endian:
 *   bytes 0–7    ASCII "GSPARAMS"
 *   bytes 8–11   uint32 format version (1)
 *   bytes 12–15  uint32 n: length of the header
 *   n bytes      UTF-8 JSON header:
 *                { "leaves": [{ "path": "stages.0.down.w", "dtype": "float32", "shape": [16, 3, 3, 3] }, …] }
 *   then         every leaf's values in header order, row-major, as float32 or float64
 * A path names the leaf's place in the tree: record keys and list indices joined by ".".
 * Browser-safe (bytes in, bytes out); files are written by gradsim/node's saveParams/loadParams.
 */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";

const MAGIC = "GSPARAMS",
  VERSION = 1;

interface LeafEntry {
  readonly path: string;
  readonly dtype: "float32" | "float64";
  readonly shape: number[];
}

function leaves(tree: unknown, path: string, out: { entry: LeafEntry; value: Array }[]): void {
  if (tree && typeof tree === "object" && "shape" in tree && "dtype" in tree) {
    const a = tree as Array;
    if (a.dtype !== "float32" && a.dtype !== "float64")
      throw new Error(
        `checkpoint: the parameter ${path || "(root)"} is ${a.dtype}; only float32 and float64 parameters are saved.`,
      );
    out.push({ entry: { path, dtype: a.dtype, shape: [...a.shape] }, value: a });
    return;
  }
  if (globalThis.Array.isArray(tree)) {
    tree.forEach((t, i) => leaves(t, path ? `${path}.${i}` : String(i), out));
    return;
  }
  if (tree && typeof tree === "object") {
    for (const [k, v] of Object.entries(tree)) {
      if (k.includes(".")) throw new Error(`checkpoint: the key "${k}" contains "."; parameter keys name tree paths.`);
      leaves(v, path ? `${path}.${k}` : k, out);
    }
    return;
  }
  throw new Error(
    `checkpoint: ${path || "(root)"} is ${tree === null ? "null" : typeof tree}; ` +
      `a parameter tree holds only Arrays in records and lists.`,
  );
}

/** The parameter tree as checkpoint bytes. */
export async function serializeParams(params: unknown): Promise<Uint8Array> {
  const list: { entry: LeafEntry; value: Array }[] = [];
  leaves(params, "", list);
  const header = new TextEncoder().encode(JSON.stringify({ leaves: list.map((l) => l.entry) }));
  const sizes = list.map((l) => l.value.size * (l.entry.dtype === "float64" ? 8 : 4));
  const out = new Uint8Array(16 + header.length + sizes.reduce((a, b) => a + b, 0));
  out.set(new TextEncoder().encode(MAGIC), 0);
  const view = new DataView(out.buffer);
  view.setUint32(8, VERSION, true);
  view.setUint32(12, header.length, true);
  out.set(header, 16);
  let at = 16 + header.length;
  for (const [i, l] of list.entries()) {
    const data = await l.value.data();
    for (let k = 0; k < data.length; k++) {
      if (l.entry.dtype === "float64") view.setFloat64(at + 8 * k, data[k]!, true);
      else view.setFloat32(at + 4 * k, data[k]!, true);
    }
    at += sizes[i]!;
  }
  return out;
}

/**
 * Checkpoint bytes → the parameter tree (lists where the path's keys are 0, 1, …). `what` names the source in errors.
 */
export function parseParams(bytes: Uint8Array, what = "checkpoint"): unknown {
  const bad = (why: string) => new Error(`${what}: ${why}`);
  if (bytes.length < 16 || new TextDecoder().decode(bytes.subarray(0, 8)) !== MAGIC)
    throw bad(`not a gradsim parameter file (it does not start with "${MAGIC}"); save parameters with saveParams.`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(8, true),
    n = view.getUint32(12, true);
  if (version !== VERSION) throw bad(`format version ${version}; this gradsim reads version ${VERSION}.`);
  if (16 + n > bytes.length)
    throw bad(`truncated: the header says ${n} bytes, the file has ${bytes.length - 16} after the preamble.`);
  let header: { leaves: LeafEntry[] };
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(16, 16 + n)));
  } catch (e) {
    throw bad(`the header is not JSON (${(e as Error).message}); the file is corrupt.`);
  }
  if (!header || !globalThis.Array.isArray(header.leaves))
    throw bad("the header has no leaf list; the file is corrupt.");
  let at = 16 + n;
  // Null-prototype records: no path segment can reach Object.prototype, and the forbidden names are refused anyway.
  const root: Record<string, unknown> = Object.create(null);
  const seen = new Set<string>();
  for (const l of header.leaves) {
    if (
      !l ||
      typeof l.path !== "string" ||
      (l.dtype !== "float32" && l.dtype !== "float64") ||
      !globalThis.Array.isArray(l.shape) ||
      !l.shape.every((d) => Number.isInteger(d) && d >= 0)
    ) {
      throw bad(`a header entry is malformed (${JSON.stringify(l)}); the file is corrupt.`);
    }
    const keys = l.path.split(".");
    const forbidden = keys.find((k) => FORBIDDEN_KEYS.has(k));
    if (forbidden !== undefined)
      throw bad(
        `the parameter path "${l.path}" has the segment "${forbidden}", which no ` +
          `parameter tree has; the file was not written by saveParams — do not load it.`,
      );
    if (keys.some((k) => k === ""))
      throw bad(`the parameter path "${l.path}" has an empty segment; the file is corrupt.`);
    if (seen.has(l.path)) throw bad(`the parameter ${l.path} appears twice; the file is corrupt.`);
    for (let i = 1; i < keys.length; i++) {
      const prefix = keys.slice(0, i).join(".");
      if (seen.has(prefix))
        throw bad(`the parameter ${l.path} lies inside the parameter ${prefix}; the file is corrupt.`);
    }
    const inner = l.path + ".";
    for (const p of seen)
      if (p.startsWith(inner))
        throw bad(`the parameter ${p} lies inside the parameter ${l.path}; the file is corrupt.`);
    seen.add(l.path);
    const size = l.shape.reduce((a, b) => a * b, 1),
      width = l.dtype === "float64" ? 8 : 4;
    if (at + size * width > bytes.length)
      throw bad(`truncated: ${l.path} needs ${size * width} bytes at offset ${at}, the file ends at ${bytes.length}.`);
    const values = l.dtype === "float64" ? new Float64Array(size) : new Float32Array(size);
    let nonFinite = 0;
    for (let k = 0; k < size; k++) {
      values[k] = l.dtype === "float64" ? view.getFloat64(at + 8 * k, true) : view.getFloat32(at + 4 * k, true);
      if (!Number.isFinite(values[k]!)) nonFinite++;
    }
    if (nonFinite > 0)
      throw bad(
        `the parameter ${l.path} holds ${nonFinite} non-finite value${nonFinite === 1 ? "" : "s"} ` +
          `(NaN or ±Infinity) of ${size}: the training that wrote it diverged; ` +
          `retrain it (e.g. with a smaller learning rate).`,
      );
    at += size * width;
    let node: Record<string, unknown> = root;
    keys.slice(0, -1).forEach((k) => {
      if (!Object.hasOwn(node, k)) node[k] = Object.create(null);
      node = node[k] as Record<string, unknown>;
    });
    node[keys[keys.length - 1]!] = np.reshape(np.array(values, { dtype: l.dtype }), l.shape);
  }
  if (at !== bytes.length) throw bad(`${bytes.length - at} bytes after the last parameter; the file is corrupt.`);
  return listify(root);
}

/** Path segments that would reach an object's prototype machinery: never a parameter's name. */
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/**
 * `params` (read from `what`) must be `like`'s tree with the same shapes and dtypes (e.g. `like` a
 * freshly initialised network of the configuration it is loaded for); a mismatch names the first
 * differing parameter by its path.
 */
export function checkParamsLike(params: unknown, like: unknown, what = "checkpoint"): void {
  const a: { entry: LeafEntry; value: Array }[] = [],
    b: { entry: LeafEntry; value: Array }[] = [];
  leaves(params, "", a);
  leaves(like, "", b);
  // By path: a record's key order is not part of the tree (flatten sorts keys).
  const inFile = new Map(a.map((l) => [l.entry.path, l.entry])),
    inNet = new Map(b.map((l) => [l.entry.path, l.entry]));
  const missing = [...inNet.keys()].filter((p) => !inFile.has(p)),
    extra = [...inFile.keys()].filter((p) => !inNet.has(p));
  const list = (xs: string[]) => `${xs.slice(0, 5).join(", ")}${xs.length > 5 ? ", …" : ""}`;
  if (missing.length > 0 || extra.length > 0) {
    throw new Error(
      `${what}: the file's parameters are not the network's` +
        `${missing.length ? `; missing: ${list(missing)}` : ""}` +
        `${extra.length ? `; not in the network: ${list(extra)}` : ""}. ` +
        "It was trained for another configuration: retrain it, or load it with that configuration.",
    );
  }
  b.forEach((l, i) => {
    const q = l.entry,
      p = inFile.get(q.path)!;
    if (p.shape.join() !== q.shape.join() || p.dtype !== q.dtype)
      throw new Error(
        `${what}: parameter ${i} (${p.path}) is ${p.dtype}[${p.shape}] in the file, ${q.dtype}[${q.shape}] in ` +
          `the network. It was trained for another configuration: retrain it, or load it with that configuration.`,
      );
  });
}

/** Records whose keys are exactly 0…n−1 become lists. */
function listify(node: unknown): unknown {
  if (!node || typeof node !== "object" || "shape" in node) return node;
  const entries = Object.entries(node as Record<string, unknown>).map(([k, v]) => [k, listify(v)] as const);
  const isList = entries.length > 0 && entries.every(([k], i) => k === String(i));
  if (isList) return entries.map(([, v]) => v);
  const record: Record<string, unknown> = Object.create(null);
  for (const [k, v] of entries) record[k] = v;
  return record;
}
