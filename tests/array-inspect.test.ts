/** console.log of an Array shows its dtype, shape and (small, CPU) values, not the object's internals. */
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { np } from "../src/index.js";

describe("console.log(x)", () => {
  it("prints the dtype, the shape and the values of a small CPU array", () => {
    expect(inspect(np.array([1, 2, 3]))).toBe("Array(f32[3]) [1,2,3]");
    expect(inspect(np.array([[1, 2]], { dtype: "float64" }))).toBe("Array(f64[1,2]) [[1,2]]");
    expect(inspect({ x: np.array(2.5) })).toBe("{ x: Array(f32[]) 2.5 }");
  });
  it("summarises a large array instead of printing thousands of values", () => {
    expect(inspect(np.zeros([40, 40]))).toBe(
      "Array(f32[40,40]) (1600 values; x.toList() or await x.data() reads them)",
    );
    expect(inspect(np.zeros([40, 40]))).not.toContain("backend");
  });
});
