/**
 * gradsim for Node: everything in the main entry, plus what needs a file system or processes —
 * PNG, GIF and plot files, the loss-curve files `optim.fit` writes, videos read from disk, dataset
 * records and worker processes (`sysid`). In Node, `import … from "gradsim"` resolves here too;
 * bundlers for the web get the main entry, which imports no Node built-ins.
 *
 * @module gradsim
 */
import "./optim/loss-curve-files.js"; // lets optim.fit write lossCurvePng / lossCurveCsv
export * from "./index.js";
export * as optim from "./optim/node.js";
export * as sysid from "./sysid/node-entry.js";
export * as networks from "./networks/node-entry.js";
export * as risp from "./risp/node-entry.js";
export * as control from "./control/node-entry.js";
export { readPng, writeGif, writeLinePlot, writePng } from "./io/image.js";
export { compositeOver, readPngFrames } from "./io/video.js";
export { writeAtomic } from "./io/atomic.js";
export { withFileLock, type FileLockOptions } from "./io/file-lock.js";
