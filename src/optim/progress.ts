/**
 * Progress display for `fit`: a single redrawn bar on a terminal, a few plain log lines
 * otherwise (CI logs, files), nothing when disabled.
 */

/** Where progress goes: anything with `write` (process.stderr by default). */
export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}
/** "auto": a bar on a TTY, log lines otherwise. */
export type ProgressMode = "auto" | "bar" | "log" | false;

export interface Progress {
  update(step: number, loss: number): void;
  finish(summary: string): void;
}

const REDRAW_MS = 100;
/** Log mode prints about this many lines per run (plus the summary). */
const LOG_LINES = 10;

export const formatLoss = (v: number): string =>
  !Number.isFinite(v)
    ? String(v)
    : v !== 0 && (Math.abs(v) < 1e-3 || Math.abs(v) >= 1e5)
      ? v.toExponential(3)
      : v.toPrecision(5);
const formatRate = (r: number): string => (r >= 100 ? r.toFixed(0) : r.toPrecision(3));
const formatSeconds = (s: number): string =>
  s < 60 ? `${s.toFixed(1)}s` : `${Math.floor(s / 60)}m${Math.round(s % 60)}s`;

const defaultStream = (): ProgressStream | null =>
  (globalThis as { process?: { stderr?: ProgressStream } }).process?.stderr ?? null;

export function createProgress(
  total: number,
  mode: ProgressMode,
  stream: ProgressStream | undefined,
  label = "fit",
): Progress {
  const out = stream ?? defaultStream();
  const kind = mode === false || !out ? "none" : mode === "auto" ? (out.isTTY ? "bar" : "log") : mode;
  const t0 = performance.now();
  let lastDraw = -Infinity;
  const rate = (done: number) => done / Math.max(1e-9, (performance.now() - t0) / 1000);

  if (kind === "none" || !out) return { update: () => {}, finish: () => {} };
  if (kind === "log") {
    const every = Math.max(1, Math.ceil(total / LOG_LINES));
    return {
      update: (step, loss) => {
        if (step % every !== 0) return;
        out.write(`${label}: step ${step}/${total}  loss ${formatLoss(loss)}  ${formatRate(rate(step + 1))} steps/s\n`);
      },
      finish: (summary) => {
        out.write(`${label}: ${summary}\n`);
      },
    };
  }
  const draw = (step: number, loss: number) => {
    const done = step + 1;
    const r = rate(done);
    const eta = r > 0 ? (total - done) / r : 0;
    const stats = ` ${done}/${total}  loss ${formatLoss(loss)}  ${formatRate(r)} steps/s  ETA ${formatSeconds(eta)}`;
    const barWidth = Math.max(10, Math.min(40, (out.columns ?? 100) - stats.length - label.length - 4));
    const filled = Math.round((barWidth * done) / Math.max(1, total));
    out.write(`\r\x1b[2K${label} ${"█".repeat(filled)}${"░".repeat(barWidth - filled)}${stats}`);
  };
  let pending: [number, number] | null = null;
  return {
    update: (step, loss) => {
      pending = [step, loss];
      const now = performance.now();
      if (now - lastDraw < REDRAW_MS && step + 1 < total) return;
      lastDraw = now;
      draw(step, loss);
      pending = null;
    },
    finish: (summary) => {
      if (pending) draw(...pending); // the last throttled update
      out.write(`\n${label}: ${summary}\n`);
    },
  };
}
