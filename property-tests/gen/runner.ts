/**
 * Which evaluator runs staged programs (jit bodies, scan/cond/while bodies) in these property
 * suites: the CPU compiler (src/core/compile) by default, so random programs test it too; set
 * GRADSIM_PROPS_COMPILE=0 to use the IR interpreter and isolate transform bugs from compiler bugs.
 */
import { afterAll, beforeAll } from "vitest";
import { setCpuCompile } from "../../src/core/run-ir.js";

export const COMPILE_IN_PROPERTIES = process.env.GRADSIM_PROPS_COMPILE !== "0";

/** Call at the top level of a test file. */
export function useEvaluatorForProperties(): void {
  let previous = true;
  beforeAll(() => {
    previous = setCpuCompile(COMPILE_IN_PROPERTIES);
  });
  afterAll(() => {
    setCpuCompile(previous);
  });
}
