/** gradsim.risp, Node-only parts: predictors trained to and read from disk. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as random from "../core/random.js";
import * as networks from "../networks/node-entry.js";
import {
  predictorConfig,
  predictorTraining,
  TRAINED_ROWS,
  type PredictorSpec,
  type PredictorTraining,
  type Standardisation,
  type TrainedPredictor,
  type TrainedRow,
} from "./predictor.js";

/** Beside each network's params.gsp: its Standardisation, to read states in their units. */
export const STANDARDISATION_FILE = "standardisation.json";

/** Train one row's network; params.gsp, its loss curve and standardisation.json go to `dir`. */
export async function trainPredictorToDisk(dir: string, spec: PredictorSpec): Promise<TrainedPredictor> {
  const t = predictorTraining(spec);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, STANDARDISATION_FILE), JSON.stringify(t.standardisation) + "\n");
  const r = await networks.trainToDisk(dir, t.options);
  return {
    params: r.params,
    standardisation: t.standardisation,
    predict: t.predict(r.params),
    seconds: r.seconds,
    epochLosses: r.epochLosses,
    finalLoss: r.epochLosses[r.epochLosses.length - 1]!,
  };
}

/** A trained network's directory under `root`: `<root>/<env>/<row>`. */
export const predictorDir = (root: string, env: string, row: string) => join(root, env, row);

/**
 * The three networks of an environment trained under `root` (by `trainPredictorToDisk` into `predictorDir`s), and how
 * ours' reads states in their units.
 */
export interface Predictors {
  readonly config: networks.PredictorConfig;
  readonly params: Record<TrainedRow, networks.PredictorParams>;
  readonly oursStandardisation: Standardisation;
}

/**
 * Read the networks of environment `env` trained with `settings` (whose outputs are the state's `outputs` components)
 * from `root`: a missing or mismatched file is a clear error.
 */
export function loadPredictors(
  root: string,
  env: string,
  settings: Pick<PredictorTraining, "resolution" | "widths">,
  outputs: number,
): Predictors {
  const config = predictorConfig(settings, outputs);
  const params = Object.fromEntries(
    TRAINED_ROWS.map((row) => {
      const file = join(predictorDir(root, env, row), "params.gsp");
      if (!existsSync(file))
        throw new Error(
          `${file} is missing: the ${env}'s ${row} network has not been trained in ${root}; ` +
            `train it (risp-state) or give another directory.`,
        );
      // Checked against the configuration the settings give: a file trained for another one is refused by name.
      return [row, networks.loadParams<networks.PredictorParams>(file, networks.initPredictor(random.key(0), config))];
    }),
  ) as Predictors["params"];
  const standardisationFile = join(predictorDir(root, env, "ours"), STANDARDISATION_FILE);
  if (!existsSync(standardisationFile))
    throw new Error(
      `${standardisationFile} is missing: the ${env}'s ours network in ${root} ` +
        `was trained before its outputs' standardisation was saved; ` +
        `retrain it (or give another directory).`,
    );
  return {
    config,
    params,
    oursStandardisation: JSON.parse(readFileSync(standardisationFile, "utf8")) as Standardisation,
  };
}
