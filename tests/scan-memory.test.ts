/**
 * Memory of reverse mode through a 10,000-step lax.scan (256 float64 state values), plain vs
 * `checkpoint: true`, measured three ways:
 *  1. bytes of the residual buffers reverse mode keeps between the forward and backward pass
 *     (the constants of the linearized program), counted exactly in this process;
 *  2. in a `node --expose-gc` child process per case: live bytes (heap + ArrayBuffers after a
 *     forced GC) held between vjp's forward pass and the backward pass;
 *  3. in the same child: the peak resident set size of the whole gradient (maxRSS), which
 *     includes the backward pass's transients (segment recomputation for checkpointing).
 * Children run the default (compiled) evaluator; GRADSIM_MEMORY_SAMPLED=1 also runs the IR
 * interpreter with live memory sampled (forced GC) during the loop. The numbers are printed
 * so CI logs show them.
 */
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { ConcreteArray } from "../src/core/concrete.js";
import { linearizeFlat } from "../src/transforms/vjp.js";
import { rollout, STATE, STEPS } from "./scan-memory.rollout.js";

const here = dirname(fileURLToPath(import.meta.url));
const MB = 2 ** 20;
const mb = (b: number) => `${(b / MB).toFixed(1)} MB`;

type Mode = "plain" | "checkpoint";
type Evaluator = "compiled" | "interpreted";
interface ChildReport {
  mode: Mode;
  evaluator: Evaluator;
  ms: number;
  samples: number;
  heldAfterForward: number;
  livePeak: number;
  rssPeak: number;
  grad: number[];
  gradSum: number;
}
function runChild(mode: Mode, evaluator: Evaluator): ChildReport {
  // A 1 MB semi-space makes V8 collect short-lived arrays promptly, so maxRSS is not dominated by GC slack.
  const out = execFileSync(
    process.execPath,
    ["--expose-gc", "--max-semi-space-size=1", "--import", "tsx", join(here, "scan-memory.child.ts"), mode, evaluator],
    {
      cwd: join(here, ".."),
      encoding: "utf8",
      timeout: 180_000,
    },
  );
  return JSON.parse(out.trim().split("\n").at(-1)!) as ChildReport;
}
function expectSameGradient(a: ChildReport, b: ChildReport): void {
  a.grad.forEach((g, i) => expect(Math.abs(b.grad[i]! - g)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(g))));
  expect(Math.abs(b.gradSum - a.gradSum)).toBeLessThanOrEqual(1e-9 * Math.abs(a.gradSum));
}

function residualBytes(checkpoint: boolean): number {
  const { c0, loss } = rollout(checkpoint);
  const { lin } = linearizeFlat((c) => [loss(c)], [c0]);
  return lin.consts.reduce(
    (s, a) => s + (a instanceof ConcreteArray ? a.size * (a.dtype === "float64" ? 8 : 4) : 0),
    0,
  );
}

describe(`scan gradient memory (${STEPS} steps, ${STATE} float64 state)`, () => {
  it("stores O(√T) residual bytes with checkpoint: true instead of O(T)", () => {
    const plain = residualBytes(false),
      ckpt = residualBytes(true);
    console.log(
      `[scan-memory] stored residuals: plain ${(plain / MB).toFixed(2)} MB, ` +
        `checkpointed ${(ckpt / MB).toFixed(3)} MB ` +
        `(${(plain / ckpt).toFixed(0)}x less)`,
    );
    // plain keeps at least one state-sized residual per step; checkpointing keeps ~√T carries
    expect(plain).toBeGreaterThanOrEqual(STEPS * STATE * 8);
    expect(ckpt).toBeLessThan(plain / 20);
    expect(ckpt).toBeLessThan(4 * Math.ceil(Math.sqrt(STEPS)) * STATE * 8);
  });

  it("memory held for the backward pass and peak RSS are far lower with checkpointing (child processes)", () => {
    const plain = runChild("plain", "compiled"),
      ckpt = runChild("checkpoint", "compiled");
    console.log(
      `[scan-memory] held between forward and backward: plain ${mb(plain.heldAfterForward)}, ` +
        `checkpointed ${mb(ckpt.heldAfterForward)} ` +
        `(${(plain.heldAfterForward / ckpt.heldAfterForward).toFixed(0)}x less)`,
    );
    console.log(
      `[scan-memory] peak RSS above baseline (whole gradient): plain ${mb(plain.rssPeak)}, ` +
        `checkpointed ${mb(ckpt.rssPeak)}; ` +
        `time plain ${plain.ms.toFixed(0)} ms, checkpointed ${ckpt.ms.toFixed(0)} ms`,
    );
    expectSameGradient(plain, ckpt);
    expect(plain.heldAfterForward).toBeGreaterThan(STEPS * STATE * 8);
    expect(ckpt.heldAfterForward).toBeLessThan(plain.heldAfterForward / 10);
    // The checkpointed run's whole-gradient peak (recomputation included) stays below what the
    // plain run holds live in residuals alone — a lower bound of the plain peak. (Plain's own RSS
    // delta can under-read: pages freed before the baseline are reused without growing RSS.)
    expect(ckpt.rssPeak).toBeLessThan(plain.heldAfterForward);
  });

  it.runIf(process.env.GRADSIM_MEMORY_SAMPLED === "1")(
    "sampled live peak with the IR interpreter (GRADSIM_MEMORY_SAMPLED=1)",
    () => {
      const plain = runChild("plain", "interpreted"),
        ckpt = runChild("checkpoint", "interpreted");
      console.log(
        `[scan-memory] interpreter, sampled live peak: plain ${mb(plain.livePeak)}, ` +
          `checkpointed ${mb(ckpt.livePeak)} ` +
          `(${plain.samples}/${ckpt.samples} samples); ` +
          `peak RSS plain ${mb(plain.rssPeak)}, checkpointed ${mb(ckpt.rssPeak)}`,
      );
      expectSameGradient(plain, ckpt);
      expect(Math.min(plain.samples, ckpt.samples)).toBeGreaterThanOrEqual(5);
      expect(ckpt.livePeak).toBeLessThan(plain.livePeak / 5);
    },
  );
});
