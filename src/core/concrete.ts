import { Array } from "./array.js";
import type { ShapedArray } from "./aval.js";
import type { TypedArray } from "./dtype.js";
import type { Backend } from "./backends/backend.js";

/** Nested lists as JSON-like text, but NaN/±Infinity print as themselves (JSON.stringify turned them into null). */
const formatNested = (v: unknown): string =>
  globalThis.Array.isArray(v) ? `[${v.map(formatNested).join(",")}]` : String(v);

/** An array with a value: a buffer on a backend. */
export class ConcreteArray extends Array {
  #buffer: unknown;
  constructor(
    readonly aval: ShapedArray,
    readonly backend: Backend,
    buffer: unknown,
  ) {
    super();
    this.#buffer = buffer;
  }
  get buffer(): unknown {
    if (this.#buffer === null) throw new Error(`this ${this.aval} array was disposed; it cannot be used any more.`);
    return this.#buffer;
  }
  get disposed(): boolean {
    return this.#buffer === null;
  }
  async data(): Promise<TypedArray> {
    return this.backend.read(this);
  }
  dataSync(): TypedArray {
    return this.backend.readSync(this);
  }
  dispose(): void {
    if (this.#buffer !== null) {
      this.backend.free(this.#buffer);
      this.#buffer = null;
    }
  }
  toString(): string {
    if (this.backend.name === "cpu" && this.size <= 64 && !this.disposed)
      return `Array(${this.aval}, ${formatNested(this.toList())})`;
    return `Array(${this.aval}, ${this.backend.name})`;
  }
}
