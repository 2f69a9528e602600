/**
 * The wall time of a reproduction made in segments (stopped, then continued with `--resume`):
 * each segment's start and end, and each experiment's time summed over the segments it ran in.
 * The file is rewritten every few seconds while a segment runs, so a killed segment keeps its
 * time to within that interval.
 */
import { existsSync, readFileSync } from "node:fs";
import { writeAtomic } from "gradsim/node";

export interface ClockFile {
  readonly commit: string;
  readonly segments: readonly { readonly start: string; readonly end: string }[];
  /** Seconds per experiment, over every segment (an experiment still running: up to the last write). */
  readonly experiments: Readonly<Record<string, number>>;
}

const HEARTBEAT_MS = 10_000;

export class RunClock {
  private readonly start = Date.now();
  private readonly running = new Map<string, number>();
  private readonly finished: Record<string, number>;
  private readonly timer: ReturnType<typeof setInterval>;

  private constructor(
    private readonly file: string,
    private readonly commit: string,
    private readonly earlier: ClockFile | null,
  ) {
    this.finished = { ...earlier?.experiments };
    this.timer = setInterval(() => this.write(), HEARTBEAT_MS);
    this.timer.unref();
    this.write();
  }

  /**
   * A new clock at `file`, continuing the segments recorded there when `resume` is set. Throws when
   * they ran at another commit: one reproduction's tables come from one commit.
   */
  static open(file: string, commit: string, resume: boolean): RunClock {
    const earlier = resume && existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as ClockFile) : null;
    if (earlier && earlier.commit !== commit) {
      throw new Error(
        `the earlier segments of this reproduction (${file}) ran at commit ${earlier.commit}, ` +
          `this checkout is ${commit}: ` +
          `resume from a checkout of ${earlier.commit}, or start a new reproduction without --resume.`,
      );
    }
    return new RunClock(file, commit, earlier);
  }

  begin(name: string): void {
    this.running.set(name, Date.now());
  }

  /** Ends an experiment's time in this segment; returns its seconds over every segment. */
  end(name: string): number {
    this.finished[name] = this.seconds(name);
    this.running.delete(name);
    this.write();
    return Number(this.finished[name]!.toFixed(1));
  }

  /** Seconds over every segment, this one included. */
  totalSeconds(): number {
    const before = (this.earlier?.segments ?? []).reduce(
      (s, g) => s + (Date.parse(g.end) - Date.parse(g.start)) / 1000,
      0,
    );
    return before + (Date.now() - this.start) / 1000;
  }

  segmentCount(): number {
    return (this.earlier?.segments.length ?? 0) + 1;
  }

  stop(): void {
    clearInterval(this.timer);
    this.write();
  }

  private seconds(name: string): number {
    const since = this.running.get(name);
    return (this.finished[name] ?? 0) + (since === undefined ? 0 : (Date.now() - since) / 1000);
  }

  private write(): void {
    const experiments = Object.fromEntries(
      [...new Set([...Object.keys(this.finished), ...this.running.keys()])].map((n) => [
        n,
        Number(this.seconds(n).toFixed(1)),
      ]),
    );
    const segments = [
      ...(this.earlier?.segments ?? []),
      { start: new Date(this.start).toISOString(), end: new Date().toISOString() },
    ];
    writeAtomic(
      this.file,
      JSON.stringify({ commit: this.commit, segments, experiments } satisfies ClockFile, null, 2) + "\n",
    );
  }
}
