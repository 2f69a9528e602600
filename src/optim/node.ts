/** gradsim.optim in the Node entry: the optimizers, plus loss-curve files. */
export * from "./index.js";
export { writeLossCurveCsv, writeLossCurvePng } from "./loss-curve-files.js";
