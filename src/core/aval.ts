import { DTYPE_SHORT, type DType } from "./dtype.js";
import { sizeOf, type Shape } from "./shape.js";

/** The abstract value of an array: shape, dtype and weak typing (JS number origin). */
export class ShapedArray {
  readonly shape: readonly number[];
  /** Number of elements (computed once: loops read it per step). */
  readonly size: number;
  constructor(
    shape: Shape,
    readonly dtype: DType,
    readonly weak = false,
  ) {
    this.shape = Object.freeze([...shape]);
    this.size = sizeOf(this.shape);
  }
  get ndim(): number {
    return this.shape.length;
  }
  withShape(shape: Shape): ShapedArray {
    return new ShapedArray(shape, this.dtype, this.weak);
  }
  withDType(dtype: DType): ShapedArray {
    return new ShapedArray(this.shape, dtype, false);
  }
  strong(): ShapedArray {
    return this.weak ? new ShapedArray(this.shape, this.dtype, false) : this;
  }
  equals(o: ShapedArray): boolean {
    return (
      this.dtype === o.dtype && this.shape.length === o.shape.length && this.shape.every((d, i) => d === o.shape[i])
    );
  }
  toString(): string {
    return `${DTYPE_SHORT[this.dtype]}[${this.shape.join(",")}]`;
  }
}
