/**
 * Debug-NaN mode: the first primitive that turns finite inputs into NaN/Inf is named, eagerly, under jit and in
 * gradients.
 */
import { afterEach, describe, expect, it } from "vitest";
import { grad, jit, np, setDebugNans, type Array } from "../src/index.js";

const x = () => np.array([1, 0, 2], { dtype: "float64" });
// log(0) = −∞ at the second element, deliberately.
const logLoss = (v: Array) => np.sum(np.mul(np.log(v), 2));

afterEach(() => {
  setDebugNans(false);
});

describe("debug-NaN mode", () => {
  it("is off by default: the NaN flows through silently, as without it", () => {
    expect(Number.isFinite(logLoss(x()).dataSync()[0]!)).toBe(false);
  });
  it("names log, its shapes and the call site in eager code", () => {
    setDebugNans(true);
    expect(() => logLoss(x())).toThrow(
      /debug NaNs: log produced -Infinity from finite inputs .*f64\[3\].*debug-nans\.test\.ts/,
    );
  });
  it("re-runs a jitted function op by op and names log inside it", () => {
    setDebugNans(true);
    expect(() => jit(logLoss)(x())).toThrow(
      /debug NaNs: log produced -Infinity from finite inputs inside jit\(logLoss\)/,
    );
  });
  it("finds the primitive of a gradient that is not finite (1/v at 0 in log's derivative)", () => {
    setDebugNans(true);
    // The forward value is finite (sqrt(0) = 0); the derivative 1/(2·sqrt(v)) is not.
    const f = (v: Array) => np.sum(np.sqrt(v));
    expect(Number.isFinite(f(x()).dataSync()[0]!)).toBe(true);
    expect(() => jit(grad(f))(x())).toThrow(/debug NaNs: (div|rsqrt|pow) produced Infinity from finite inputs/);
  });
  it("leaves finite programs alone", () => {
    setDebugNans(true);
    expect(jit(grad((v: Array) => np.sum(np.square(v))))(x()).dataSync()).toEqual(new Float64Array([2, 0, 4]));
  });
});
