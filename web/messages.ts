/**
 * What the page tells a visitor when something goes wrong: what happened, in a sentence, and what
 * to do next — never a stack trace or a command line (those go to the browser's console).
 */

/** The first sentence of an error's message, without the library's "decodeGif: " style prefix. */
function reason(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text
    .replace(/^[A-Za-z.]+: /, "")
    .replace(/\s+at\s+\S+:\d+[\s\S]*$/, "")
    .trim()
    .replace(/\.$/, "");
}

/** A file the visitor gave could not be turned into a video. */
export function fileProblem(files: readonly { name: string; type: string }[], e: unknown): string {
  const names = files.map((f) => `“${f.name}”`).join(", ");
  if (files.length === 0)
    return "No file arrived. Drop an animated GIF or PNG frames on the page, or use the file chooser.";
  const kinds = new Set(files.map((f) => f.type));
  const notImages = files.filter((f) => f.type !== "image/gif" && f.type !== "image/png");
  if (notImages.length) {
    return (
      `${notImages.map((f) => `“${f.name}”`).join(", ")} ` +
      `${notImages.length === 1 ? "is not" : "are not"} a GIF or PNG image. ` +
      "Give one animated GIF, or the video's frames as PNG files (they are played in name order)."
    );
  }
  if (kinds.has("image/gif") && files.length > 1)
    return "Give one GIF, or PNG frames — not several GIFs, and not GIFs and PNGs mixed.";
  const what = kinds.has("image/gif") ? "an animated GIF" : "a PNG image";
  return (
    `${names} could not be read as ${what} (${reason(e)}). ` +
    `Check that the file opens in an image viewer, or export the video again as a GIF or as PNG frames.`
  );
}

/** Anything else that failed while the page was `doing` something ("recovering the mass", …). */
export function failure(doing: string, e: unknown, backend: string): string {
  const why = reason(e);
  if (/device (was )?lost|GPUDevice|out of memory|OOM/i.test(why) && backend === "webgpu") {
    return (
      `The graphics adapter stopped while ${doing} (${why}). ` +
      `Reload the page to try again, or compute on the CPU with the link at the top.`
    );
  }
  return (
    `Something went wrong while ${doing}: ${why}. Reload the page and try again; ` +
    `the browser's console has the details for a bug report.`
  );
}
