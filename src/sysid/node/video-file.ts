/**
 * A user's video as estimator input: a directory of PNG frames (or one PNG), an animated GIF, or any video
 * file ffmpeg reads (MP4, MOV, WebM, …; through Debian's `ffmpeg` when installed), cropped to a
 * rectangle of the source and resized to the estimator's resolution by area averaging, as float32
 * RGB frames [T, H, W, 3] in [0, 1]. Frames with transparency (PNG alpha, GIF transparency) are
 * composited over black (RGB premultiplied by alpha) — or refused with `opaque: true`, as a
 * background plate is (readBackgroundPlate). Frames are cropped and resampled one at a time as
 * they are decoded, and what decoding allocates is checked against `maxDecodedBytes` (default
 * 1 GiB; decode-limits.ts) from the files' headers before any pixel is decoded.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import { PNG } from "pngjs";
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { checkDecodedBytes, type DecodeLimits } from "../../io/decode-limits.js";
import { decodeGifFrames, gifFrameRate, gifInfo, type GifInfo } from "../../io/gif-decode.js";
import { pngDecodedBytes, pngHeader } from "../../io/png-header.js";
import { resizeInto, type Frame } from "../../io/resample.js";

export interface VideoOptions extends DecodeLimits {
  /** Output size in pixels (the estimator's resolution). */
  readonly width: number;
  readonly height: number;
  /** Source rectangle [x, y, width, height] in source pixels (default: the whole frame). */
  readonly crop?: readonly [number, number, number, number];
  /** Keep only the first `frames` frames (default: all). */
  readonly frames?: number;
  /**
   * Refuse a frame with any transparent pixel in the crop, instead of compositing it over black
   * (`what` names the video in the message, e.g. "the background plate"). Default: composite.
   */
  readonly opaque?: { readonly what: string; readonly fix: string };
}

export interface VideoFile {
  /** float32 [T, H, W, 3] in [0, 1]. */
  readonly frames: Array;
  readonly source: {
    readonly path: string;
    readonly format: "png-frames" | "gif" | "ffmpeg";
    readonly width: number;
    readonly height: number;
    readonly frames: number;
  };
  /** Frame rate recorded in the file (GIF delays, ffmpeg's stream rate), when there is one. */
  readonly fps: number | null;
}

const VIDEO_EXTENSIONS = new Set([".mp4", ".mov", ".m4v", ".webm", ".mkv", ".avi", ".mpg", ".mpeg"]);

function readBytes(path: string): Uint8Array {
  try {
    return new Uint8Array(readFileSync(path));
  } catch (e) {
    throw new Error(`video: cannot read ${path}: ${(e as Error).message}`);
  }
}

/** A PNG decoded to 8-bit RGBA, its decoded size checked from its header first. */
function readPngFile(path: string, bytes: Uint8Array, o: DecodeLimits): Frame {
  const h = pngHeader(bytes, `video: ${path}`);
  checkDecodedBytes(`video: ${path}`, `${h.width}×${h.height} pixels`, pngDecodedBytes(h), o);
  let png: PNG;
  try {
    png = PNG.sync.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch (e) {
    throw new Error(`video: ${path} is not a readable PNG (${(e as Error).message}).`);
  }
  return {
    width: png.width,
    height: png.height,
    rgba: new Uint8Array(png.data.buffer, png.data.byteOffset, png.data.length),
  };
}

/** Format, size, frame count and recorded frame rate of a video, from headers only (nothing is decoded). */
export function probeVideo(path: string): {
  format: VideoFile["source"]["format"];
  width: number;
  height: number;
  frames: number;
  fps: number | null;
} {
  const kind = videoKind(path);
  if (kind === "png-frames") {
    const names = pngNames(path);
    const first = pngHeader(readBytes(join(path, names[0]!)), `video: ${join(path, names[0]!)}`);
    return { format: kind, width: first.width, height: first.height, frames: names.length, fps: null };
  }
  if (kind === "gif") {
    let info: GifInfo;
    try {
      info = gifInfo(readBytes(path));
    } catch (e) {
      throw new Error(`video: ${path}: ${(e as Error).message}`);
    }
    return {
      format: kind,
      width: info.width,
      height: info.height,
      frames: info.frames,
      fps: gifFrameRate(info.delaysMs),
    };
  }
  const p = ffprobe(path);
  return { format: kind, width: p.width, height: p.height, frames: p.frames, fps: p.fps };
}

function videoKind(path: string): VideoFile["source"]["format"] {
  if (!existsSync(path))
    throw new Error(
      `video: "${path}" does not exist; give a directory of PNG ` +
        `frames, a .gif, or a video file ffmpeg reads (.mp4, .mov, .webm).`,
    );
  const ext = extname(path).toLowerCase();
  if (statSync(path).isDirectory() || ext === ".png") return "png-frames";
  if (ext === ".gif") return "gif";
  if (VIDEO_EXTENSIONS.has(ext)) return "ffmpeg";
  throw new Error(
    `video: "${path}" is neither a directory of PNG frames, a ` +
      `.gif, nor a video file (${[...VIDEO_EXTENSIONS].join(", ")}).`,
  );
}

export function readVideo(path: string, o: VideoOptions): VideoFile {
  if (!Number.isInteger(o.width) || !Number.isInteger(o.height) || o.width < 1 || o.height < 1) {
    throw new Error(`video: the output size must be positive whole numbers of pixels, got ${o.width}×${o.height}.`);
  }
  const { format, width: sw, height: sh, frames: total, fps } = probeVideo(path);
  const count = o.frames === undefined ? total : o.frames;
  if (!(Number.isInteger(count) && count >= 1))
    throw new Error(`video: frames must be a positive whole number, got ${o.frames}.`);
  if (count > total) throw new Error(`video: ${path} has ${total} frames, but ${count} were asked for.`);
  const crop = o.crop ?? [0, 0, sw, sh];
  const [cx, cy, cw, ch] = crop;
  if (
    ![cx, cy, cw, ch].every(Number.isInteger) ||
    cx < 0 ||
    cy < 0 ||
    cw < 1 ||
    ch < 1 ||
    cx + cw > sw ||
    cy + ch > sh
  ) {
    throw new Error(`video: crop [${crop}] (x, y, width, height) is not inside the ${sw}×${sh} frames.`);
  }
  const frameSize = o.height * o.width * 3;
  checkDecodedBytes(
    `video: ${path}`,
    `${count} frames of ${o.width}×${o.height} RGB as float32`,
    count * frameSize * 4,
    o,
  );
  const out = new Float32Array(count * frameSize);
  // Each frame is checked, cropped and resampled as it is decoded: the source is never held whole.
  const take = (f: Frame, t: number, rect: readonly [number, number, number, number], name: string) => {
    if (o.opaque) refuseTransparent(f, rect, name, o.opaque);
    resizeInto(f, rect, o.width, o.height, out, t * frameSize);
  };
  if (format === "png-frames") {
    const names = pngNames(path).slice(0, count);
    names.forEach((n, t) => {
      const file = n ? join(path, n) : path;
      const f = readPngFile(file, readBytes(file), o);
      if (f.width !== sw || f.height !== sh) {
        throw new Error(
          `video: ${n} is ${f.width}×${f.height} but ${names[0]} is ${sw}×${sh}; every frame must have the same size.`,
        );
      }
      take(f, t, crop, file);
    });
  } else if (format === "gif") {
    try {
      decodeGifFrames(
        readBytes(path),
        (rgba, _delay, t) => {
          take({ width: sw, height: sh, rgba }, t, crop, `${path} (frame ${t})`);
          return t + 1 < count;
        },
        o,
      );
    } catch (e) {
      throw new Error(
        (e as Error).message.startsWith("video:") ? (e as Error).message : `video: ${path}: ${(e as Error).message}`,
      );
    }
  } else {
    // ffmpeg crops and area-resamples while decoding, so a long high-resolution video never sits in memory at full
    // size.
    const { frames } = readWithFfmpeg(path, { crop, width: o.width, height: o.height, frames: count });
    frames.forEach((f, t) => take(f, t, [0, 0, o.width, o.height], `${path} (frame ${t})`));
  }
  return {
    frames: np.reshape(np.array(out, { dtype: "float32" }), [count, o.height, o.width, 3]),
    source: { path, format, width: sw, height: sh, frames: total },
    fps,
  };
}

/**
 * A background plate (a photo of the scene without the object) as float32 RGB [H, W, 3] in
 * [0, 1], cropped and resampled like the video. A transparent pixel says nothing about what the
 * camera saw there, so a plate with any is refused, not composited.
 */
export function readBackgroundPlate(path: string, o: Omit<VideoOptions, "frames" | "opaque">): Array {
  const v = readVideo(path, {
    ...o,
    frames: 1,
    opaque: {
      what: "the background plate",
      fix:
        "a plate is a photo of the scene without the object: save it without transparency " +
        "(flattened onto what the camera saw there), " +
        'or give a colour or "median" as the background instead',
    },
  });
  return np.reshape(v.frames, [o.height, o.width, 3]);
}

/** Throw if a pixel in `rect` of `f` is not fully opaque. */
function refuseTransparent(
  f: Frame,
  rect: readonly [number, number, number, number],
  name: string,
  o: NonNullable<VideoOptions["opaque"]>,
): void {
  const [x0, y0, w, h] = rect;
  let count = 0,
    first: [number, number] | null = null;
  for (let y = y0; y < y0 + h; y++)
    for (let x = x0; x < x0 + w; x++) {
      if (f.rgba[4 * (y * f.width + x) + 3]! < 255) {
        count++;
        first ??= [x, y];
      }
    }
  if (count > 0)
    throw new Error(
      `video: ${o.what} ${name} has ${count} transparent pixel${count === 1 ? "" : "s"} ` +
        `of ${w * h} (the first at x=${first![0]}, y=${first![1]}); ${o.fix}.`,
    );
}

/** The PNG frames of a directory, or a single PNG file (one frame), as paths relative to `pngDir`. */
function pngNames(dir: string): string[] {
  if (!statSync(dir).isDirectory()) return [""];
  const names = readdirSync(dir)
    .filter((n) => n.toLowerCase().endsWith(".png"))
    .sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
  if (!names.length) throw new Error(`video: the directory ${dir} holds no .png frames.`);
  return names;
}

const missingTool = (path: string, tool: string) =>
  new Error(
    `video: reading ${extname(path)} files needs ${tool}, which is not installed here ` +
      "(Debian: apt-get install ffmpeg). Or convert the video to PNG frames or a GIF, which gradsim reads natively.",
  );

/** Size, frame count and rate of the first video stream, from ffprobe. */
function ffprobe(path: string): { width: number; height: number; frames: number; fps: number | null } {
  const probe = spawnSync(
    "ffprobe",
    [
      "-v",
      "error",
      "-select_streams",
      "v:0",
      "-count_packets",
      "-show_entries",
      "stream=width,height,r_frame_rate,nb_read_packets",
      "-of",
      "json",
      path,
    ],
    { encoding: "utf8" },
  );
  if (probe.error) throw missingTool(path, "ffprobe");
  if (probe.status !== 0)
    throw new Error(`video: ffprobe cannot read ${path}: ${probe.stderr.trim().split("\n").pop()}`);
  const stream = (
    JSON.parse(probe.stdout) as {
      streams?: { width: number; height: number; r_frame_rate?: string; nb_read_packets?: string }[];
    }
  ).streams?.[0];
  if (!stream) throw new Error(`video: ${path} has no video stream.`);
  const [num, den] = (stream.r_frame_rate ?? "0/1").split("/").map(Number) as [number, number];
  return {
    width: stream.width,
    height: stream.height,
    frames: Number(stream.nb_read_packets ?? 0),
    fps: den > 0 && num > 0 ? num / den : null,
  };
}

/** Decode with Debian's ffmpeg, cropped and area-resampled to width×height, as raw RGBA frames on stdout. */
function readWithFfmpeg(
  path: string,
  o: { crop: readonly [number, number, number, number]; width: number; height: number; frames: number },
): { frames: Frame[]; fps: number | null } {
  const { fps } = ffprobe(path);
  const [x, y, w, h] = o.crop;
  const run = spawnSync(
    "ffmpeg",
    [
      "-v",
      "error",
      "-i",
      path,
      "-frames:v",
      String(o.frames),
      "-vf",
      `crop=${w}:${h}:${x}:${y},scale=${o.width}:${o.height}:flags=area`,
      "-f",
      "rawvideo",
      "-pix_fmt",
      "rgba",
      "-",
    ],
    { maxBuffer: 1 << 30 },
  );
  if (run.error) throw missingTool(path, "ffmpeg");
  if (run.status !== 0)
    throw new Error(`video: ffmpeg cannot decode ${path}: ${run.stderr.toString().trim().split("\n").pop()}`);
  const size = o.width * o.height * 4,
    data = new Uint8Array(run.stdout.buffer, run.stdout.byteOffset, run.stdout.length);
  const count = Math.floor(data.length / size);
  if (count < o.frames) throw new Error(`video: ffmpeg decoded ${count} frames from ${path}, expected ${o.frames}.`);
  return {
    frames: globalThis.Array.from({ length: count }, (_, t) => ({
      width: o.width,
      height: o.height,
      rgba: data.subarray(t * size, (t + 1) * size),
    })),
    fps,
  };
}
