import type { ShapedArray } from "../aval.js";
import type { DType, TypedArray } from "../dtype.js";
import type { Primitive } from "../primitive.js";
import type { ConcreteArray } from "../concrete.js";

export type BackendName = "cpu" | "webgpu";

/** Host-side view of an array, as CPU reference implementations see it. */
export interface HostArray {
  readonly data: TypedArray;
  readonly shape: readonly number[];
  readonly dtype: DType;
}

/** A place where arrays live and primitives run eagerly. */
export interface Backend {
  readonly name: BackendName;
  /** Copies host data into a new device buffer. */
  upload(data: TypedArray, aval: ShapedArray): unknown;
  /** Runs one first-order primitive eagerly. */
  execute(
    prim: Primitive,
    inputs: readonly ConcreteArray[],
    params: unknown,
    outAvals: readonly ShapedArray[],
  ): ConcreteArray[];
  read(arr: ConcreteArray): Promise<TypedArray>;
  /** Synchronous read; throws a clear error where the device cannot do it. */
  readSync(arr: ConcreteArray): TypedArray;
  free(buffer: unknown): void;
  /** Adapter or machine details, for `devices()`. */
  info(): Record<string, unknown>;
}

const registry = new Map<BackendName, Backend>();
let current: BackendName = "cpu";

export function registerBackend(b: Backend): void {
  registry.set(b.name, b);
}

export function getBackend(name?: BackendName | string): Backend {
  const n = name ?? current;
  const b = registry.get(n as BackendName);
  if (!b) {
    if (n !== "cpu" && n !== "webgpu") throw new Error(`unknown backend ${JSON.stringify(n)}: use "cpu" or "webgpu".`);
    throw new Error(
      `backend "${n}" is not initialised: call \`await init({ backend: "${n}" ` +
        `})\` first (it throws a clear error if the device is unavailable).`,
    );
  }
  return b;
}

export const hasBackend = (name: BackendName): boolean => registry.has(name);
export const defaultBackend = (): BackendName => current;
export function setDefaultBackend(name: BackendName): void {
  getBackend(name);
  current = name;
}
export const registeredBackends = (): Backend[] => [...registry.values()];
