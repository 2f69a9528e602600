/** gradsim.sysid, Node-only parts: reports written to disk, dataset records on disk, worker processes, user videos. */
export {
  displayFrames,
  stripIndices,
  writeComparison,
  writeLossCurves,
  writeResidualMaps,
  type DisplayOptions,
} from "./node/report.js";
export { verdictExitCode } from "./verdict.js";
export { fileRecordStore, finishedInstances, instanceDir } from "./node/dataset-store.js";
export { writeAtomic } from "../io/atomic.js";
export {
  exitWithParent,
  runWorkers,
  spawnTagged,
  WORKER_ENV,
  type TaggedChild,
  type WorkerCommand,
  type WorkerExit,
} from "./node/workers.js";
export { probeVideo, readBackgroundPlate, readVideo, type VideoFile, type VideoOptions } from "./node/video-file.js";
export {
  DEFAULT_VIDEO_FIT,
  fitVideo,
  foregroundMask,
  loadVideoScene,
  resolveScene,
  type FitVideoOptions,
  type FitVideoResult,
  type LoadedScene,
} from "./node/video-fit.js";
