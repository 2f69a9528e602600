/**
 * Child process of tests/scan-memory.test.ts:
 *   node --expose-gc --max-semi-space-size=1 --import tsx <this> plain|checkpoint compiled|interpreted
 * One 10,000-step scan gradient per process, so one case's peak cannot hide another's.
 * Memory is reported above a baseline taken after a full GC, as
 *  - heldAfterForward: live bytes (V8 heap + ArrayBuffers after a forced GC) between the
 *    forward pass (vjp) and the backward pass — what reverse mode keeps for the way back;
 *  - livePeak (interpreted only): the largest live bytes sampled, with a forced GC, every 2000
 *    scan-body runs through an IR-runner hook that only observes (the compiled scan loop does
 *    not go through that hook);
 *  - rssPeak: maximum resident set size (counts garbage not yet collected; the small
 *    semi-space keeps that slack low).
 */
import { np, vjp, type Array } from "../src/index.js";
import { registerIRRunner, setCpuCompile } from "../src/core/run-ir.js";
import { rollout } from "./scan-memory.rollout.js";

const [mode, evaluator] = process.argv.slice(2);
if ((mode !== "plain" && mode !== "checkpoint") || (evaluator !== "compiled" && evaluator !== "interpreted")) {
  throw new Error(`usage: scan-memory.child.ts plain|checkpoint compiled|interpreted (got ${mode} ${evaluator})`);
}
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");
const live = (): number => {
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

setCpuCompile(evaluator === "compiled");
const { c0, loss } = rollout(mode === "checkpoint");
const baseLive = live();
const baseRss = process.memoryUsage().rss;
let calls = 0,
  samples = 0,
  livePeak = 0;
registerIRRunner(() => {
  if (++calls % 2000 === 0) {
    samples++;
    livePeak = Math.max(livePeak, live() - baseLive);
  }
  return null; // observe only: the IR still runs the normal way
});
const t0 = performance.now();
const [, backward] = vjp(loss, c0);
const heldAfterForward = live() - baseLive;
livePeak = Math.max(livePeak, heldAfterForward);
const [g] = backward(np.ones([], { dtype: "float64" })) as [Array];
const ms = performance.now() - t0;
const rssPeak = process.resourceUsage().maxRSS * 1024 - baseRss; // maxRSS is in KiB
const gd = globalThis.Array.from(g.dataSync());
console.log(
  JSON.stringify({
    mode,
    evaluator,
    ms,
    samples,
    heldAfterForward,
    livePeak,
    rssPeak,
    grad: gd.slice(0, 4),
    gradSum: gd.reduce((s, v) => s + v, 0),
  }),
);
