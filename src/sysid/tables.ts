/**
 * Tables of results in a paper's layout: rows of methods, columns of errors, our numbers beside
 * the paper's, as markdown.
 */
import type { RowSummary } from "./dataset.js";

/** Numbers for tables: 3 significant digits in [0.01, 1000), exponent notation outside, "—" for missing. */
export const fmtNumber = (x: number | undefined | null): string =>
  x === undefined || x === null || !Number.isFinite(x)
    ? "—"
    : Number.isInteger(x) && Math.abs(x) < 1e6
      ? String(x)
      : Math.abs(x) >= 0.01 && Math.abs(x) < 1000
        ? x.toPrecision(3)
        : x.toExponential(2);

/** A markdown table. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/** A paper row: its label, our row it corresponds to (null: not run here), and the paper's numbers per column. */
export interface PaperRow<C extends string = string> {
  readonly label: string;
  readonly ours: string | null;
  readonly paper: Readonly<Partial<Record<C, number>>>;
}

/**
 * Ours beside the paper's, column by column: for each paper row and column, our value from
 * `ours(row, column)` and the paper's.
 */
export function comparisonTable<C extends string>(
  rows: readonly PaperRow<C>[],
  columns: readonly { readonly key: C; readonly title: string }[],
  ours: (row: string, column: C) => number | null | undefined,
  corner = "Approach",
): string {
  const header = [corner, ...columns.flatMap((c) => [`${c.title}, ours`, "paper"])];
  return markdownTable(
    header,
    rows.map((r) => [
      r.label,
      ...columns.flatMap((c) => [fmtNumber(r.ours ? ours(r.ours, c.key) : null), fmtNumber(r.paper[c.key])]),
    ]),
  );
}

/** A dataset result's relative MAE of `row` in `column` (null when not run). */
export const relMaeOf = (
  rows: Readonly<Record<string, RowSummary>> | null | undefined,
  row: string,
  column: string,
): number | null => rows?.[row]?.relMae?.[column] ?? null;
