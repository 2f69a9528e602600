/**
 * Writes tools/risp-standin/quadrotor.json: the RISP quadrotor's drawn mesh (body frame, metres; per-vertex RGB), the
 * rotor layout and inertia of gradsim's model per kg, and the environment's camera — what make_standin.py builds its
 * MuJoCo body and POV-Ray scene from, so the Python side imports nothing of gradsim.
 *
 *   npx tsx tools/risp-standin/export-quadrotor.ts
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { models, risp } from "../../src/index.js";

const env = risp.quadrotorEnv();
const { quad } = models.rigid.quadrotor({ mass: 1, arm: 0.25, dtype: "float64" });
const out = {
  note: "exported from gradsim's risp.quadrotorEnv() and models.rigid.quadrotor({ mass: 1, arm: 0.25 })",
  vertices: Array.from(env.body),
  faces: Array.from(env.faces),
  colours: Array.from(env.pattern),
  camera: env.camera,
  rotors: Array.from(quad.rotors.dataSync()),
  spin: Array.from(quad.spin.dataSync()),
  inertiaPerKg: Array.from(quad.system.inertia.dataSync()),
  nominalMass: risp.QUADROTOR.nominalMass,
  thrustRange: risp.QUADROTOR.thrust,
  frameSeconds: 0.1,
};
writeFileSync(fileURLToPath(new URL("./quadrotor.json", import.meta.url)), JSON.stringify(out) + "\n");
