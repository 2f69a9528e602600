/**
 * A user's video as estimator input: a directory of PNG frames (or one PNG), an animated GIF, or any video
 * file ffmpeg reads (MP4, MOV, WebM, …; through Debian's `ffmpeg` when installed), cropped to a
 * rectangle of the source and resized to the estimator's resolution by area averaging, as float32
 * RGB frames [T, H, W, 3] in [0, 1]. Transparent pixels (PNG alpha, GIF transparency) are black.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import { PNG } from "pngjs";
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { decodeGif } from "../../io/gif-decode.js";
import { resizeInto, type Frame } from "../../io/resample.js";

export interface VideoOptions {
  /** Output size in pixels (the estimator's resolution). */
  readonly width: number;
  readonly height: number;
  /** Source rectangle [x, y, width, height] in source pixels (default: the whole frame). */
  readonly crop?: readonly [number, number, number, number];
  /** Keep only the first `frames` frames (default: all). */
  readonly frames?: number;
}

export interface VideoFile {
  /** float32 [T, H, W, 3] in [0, 1]. */
  readonly frames: Array;
  readonly source: { readonly path: string; readonly format: "png-frames" | "gif" | "ffmpeg"; readonly width: number; readonly height: number; readonly frames: number };
  /** Frame rate recorded in the file (GIF delays, ffmpeg's stream rate), when there is one. */
  readonly fps: number | null;
}

/** An 8-bit RGBA frame of the source video. */

const VIDEO_EXTENSIONS = new Set([".mp4", ".mov", ".m4v", ".webm", ".mkv", ".avi", ".mpg", ".mpeg"]);

function readPngFile(path: string): PNG {
  try { return PNG.sync.read(readFileSync(path)); } catch (e) { throw new Error(`video: ${path} is not a readable PNG (${(e as Error).message}).`); }
}

/** Format, size, frame count and recorded frame rate of a video, without resampling it. */
export function probeVideo(path: string): { format: VideoFile["source"]["format"]; width: number; height: number; frames: number; fps: number | null } {
  const kind = videoKind(path);
  if (kind === "png-frames") {
    const names = pngNames(path);
    const first = readPngFile(join(path, names[0]!));
    return { format: kind, width: first.width, height: first.height, frames: names.length, fps: null };
  }
  if (kind === "gif") {
    const gif = readGif(path);
    return { format: kind, width: gif.frames[0]!.width, height: gif.frames[0]!.height, frames: gif.frames.length, fps: gif.fps };
  }
  const p = ffprobe(path);
  return { format: kind, width: p.width, height: p.height, frames: p.frames, fps: p.fps };
}

function videoKind(path: string): VideoFile["source"]["format"] {
  if (!existsSync(path)) throw new Error(`video: "${path}" does not exist; give a directory of PNG frames, a .gif, or a video file ffmpeg reads (.mp4, .mov, .webm).`);
  const ext = extname(path).toLowerCase();
  if (statSync(path).isDirectory() || ext === ".png") return "png-frames";
  if (ext === ".gif") return "gif";
  if (VIDEO_EXTENSIONS.has(ext)) return "ffmpeg";
  throw new Error(`video: "${path}" is neither a directory of PNG frames, a .gif, nor a video file (${[...VIDEO_EXTENSIONS].join(", ")}).`);
}

function readGif(path: string): { frames: Frame[]; fps: number | null } {
  let gif;
  try { gif = decodeGif(new Uint8Array(readFileSync(path))); } catch (e) { throw new Error(`video: ${path}: ${(e as Error).message}`); }
  const delays = gif.delaysMs.filter((d) => d > 0);
  return { frames: gif.frames.map((rgba) => ({ width: gif.width, height: gif.height, rgba })), fps: delays.length ? 1000 / (delays.reduce((a, b) => a + b, 0) / delays.length) : null };
}

export function readVideo(path: string, o: VideoOptions): VideoFile {
  if (!Number.isInteger(o.width) || !Number.isInteger(o.height) || o.width < 1 || o.height < 1) {
    throw new Error(`video: the output size must be positive whole numbers of pixels, got ${o.width}×${o.height}.`);
  }
  const format = videoKind(path);
  const { width: sw, height: sh, frames: total } = probeVideo(path);
  const count = o.frames === undefined ? total : o.frames;
  if (!(Number.isInteger(count) && count >= 1)) throw new Error(`video: frames must be a positive whole number, got ${o.frames}.`);
  if (count > total) throw new Error(`video: ${path} has ${total} frames, but ${count} were asked for.`);
  const crop = o.crop ?? [0, 0, sw, sh];
  const [cx, cy, cw, ch] = crop;
  if (![cx, cy, cw, ch].every(Number.isInteger) || cx < 0 || cy < 0 || cw < 1 || ch < 1 || cx + cw > sw || cy + ch > sh) {
    throw new Error(`video: crop [${crop}] (x, y, width, height) is not inside the ${sw}×${sh} frames.`);
  }
  let frames: Frame[], fps: number | null = null, resampled = false;
  if (format === "png-frames") frames = readPngDirectory(path, count);
  else if (format === "gif") ({ frames, fps } = readGif(path));
  else {
    // ffmpeg crops and area-resamples while decoding, so a long high-resolution video never sits in memory at full size.
    ({ frames, fps } = readWithFfmpeg(path, { crop, width: o.width, height: o.height, frames: count }));
    resampled = true;
  }
  const out = new Float32Array(count * o.height * o.width * 3);
  for (let t = 0; t < count; t++) resizeInto(frames[t]!, resampled ? [0, 0, o.width, o.height] : crop, o.width, o.height, out, t * o.height * o.width * 3);
  return {
    frames: np.reshape(np.array(out, { dtype: "float32" }), [count, o.height, o.width, 3]),
    source: { path, format, width: sw, height: sh, frames: total }, fps,
  };
}

/** The PNG frames of a directory, or a single PNG file (one frame), as paths relative to `pngDir`. */
function pngNames(dir: string): string[] {
  if (!statSync(dir).isDirectory()) return [""];
  const names = readdirSync(dir).filter((n) => n.toLowerCase().endsWith(".png")).sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
  if (!names.length) throw new Error(`video: the directory ${dir} holds no .png frames.`);
  return names;
}

/** The first `count` *.png in `dir`, in natural order of the numbers in their names (frame2 before frame10). */
function readPngDirectory(dir: string, count: number): Frame[] {
  const names = pngNames(dir).slice(0, count);
  let first: { width: number; height: number } | null = null;
  return names.map((n) => {
    const png = readPngFile(join(dir, n));
    first ??= { width: png.width, height: png.height };
    if (png.width !== first.width || png.height !== first.height) {
      throw new Error(`video: ${n} is ${png.width}×${png.height} but ${names[0]} is ${first.width}×${first.height}; every frame must have the same size.`);
    }
    return { width: png.width, height: png.height, rgba: new Uint8Array(png.data.buffer, png.data.byteOffset, png.data.length) };
  });
}

const missingTool = (path: string, tool: string) => new Error(`video: reading ${extname(path)} files needs ${tool}, which is not installed here ` +
  "(Debian: apt-get install ffmpeg). Or convert the video to PNG frames or a GIF, which gradsim reads natively.");

/** Size, frame count and rate of the first video stream, from ffprobe. */
function ffprobe(path: string): { width: number; height: number; frames: number; fps: number | null } {
  const probe = spawnSync("ffprobe", ["-v", "error", "-select_streams", "v:0", "-count_packets", "-show_entries", "stream=width,height,r_frame_rate,nb_read_packets", "-of", "json", path], { encoding: "utf8" });
  if (probe.error) throw missingTool(path, "ffprobe");
  if (probe.status !== 0) throw new Error(`video: ffprobe cannot read ${path}: ${probe.stderr.trim().split("\n").pop()}`);
  const stream = (JSON.parse(probe.stdout) as { streams?: { width: number; height: number; r_frame_rate?: string; nb_read_packets?: string }[] }).streams?.[0];
  if (!stream) throw new Error(`video: ${path} has no video stream.`);
  const [num, den] = (stream.r_frame_rate ?? "0/1").split("/").map(Number) as [number, number];
  return { width: stream.width, height: stream.height, frames: Number(stream.nb_read_packets ?? 0), fps: den > 0 && num > 0 ? num / den : null };
}

/** Decode with Debian's ffmpeg, cropped and area-resampled to width×height, as raw RGBA frames on stdout. */
function readWithFfmpeg(path: string, o: { crop: readonly [number, number, number, number]; width: number; height: number; frames: number }): { frames: Frame[]; fps: number | null } {
  const { fps } = ffprobe(path);
  const [x, y, w, h] = o.crop;
  const run = spawnSync("ffmpeg", ["-v", "error", "-i", path, "-frames:v", String(o.frames), "-vf", `crop=${w}:${h}:${x}:${y},scale=${o.width}:${o.height}:flags=area`,
    "-f", "rawvideo", "-pix_fmt", "rgba", "-"], { maxBuffer: 1 << 30 });
  if (run.error) throw missingTool(path, "ffmpeg");
  if (run.status !== 0) throw new Error(`video: ffmpeg cannot decode ${path}: ${run.stderr.toString().trim().split("\n").pop()}`);
  const size = o.width * o.height * 4, data = new Uint8Array(run.stdout.buffer, run.stdout.byteOffset, run.stdout.length);
  const count = Math.floor(data.length / size);
  if (count < o.frames) throw new Error(`video: ffmpeg decoded ${count} frames from ${path}, expected ${o.frames}.`);
  return { frames: globalThis.Array.from({ length: count }, (_, t) => ({ width: o.width, height: o.height, rgba: data.subarray(t * size, (t + 1) * size) })), fps };
}

