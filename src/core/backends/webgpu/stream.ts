/**
 * The command stream: every dispatch and copy (eager ops, jitted programs, routines) is recorded
 * into one pending command encoder, so GPU work keeps program order; the encoder is submitted
 * at the end of a jitted call, before host writes and reads, and when enough work is pending.
 * Eager ops between submissions share one command buffer (lower per-op overhead).
 */
import { BUF_COPY_DST, BUF_MAP_READ, MAP_MODE_READ, sizeClass, type DeviceBuffer } from "./buffers.js";

/** Submit once this many dispatches are pending (keeps the device busy while the host records more). */
const FLUSH_EVERY = 64;

export class Stream {
  private encoder: GPUCommandEncoder | null = null;
  private pass: GPUComputePassEncoder | null = null;
  private pending = 0;
  private flushScheduled = false;
  private readonly staging = new Map<number, GPUBuffer[]>();
  /** Dispatches recorded since start (for tests and benchmarks). */
  dispatches = 0;
  submits = 0;

  constructor(readonly device: GPUDevice) {}

  private enc(): GPUCommandEncoder {
    return (this.encoder ??= this.device.createCommandEncoder());
  }
  private endPass(): void {
    if (this.pass) {
      this.pass.end();
      this.pass = null;
    }
  }

  dispatch(pipeline: GPUComputePipeline, bindGroup: GPUBindGroup, groups: readonly [number, number]): void {
    if (groups[0] === 0 || groups[1] === 0) return;
    this.pass ??= this.enc().beginComputePass();
    this.pass.setPipeline(pipeline);
    this.pass.setBindGroup(0, bindGroup);
    this.pass.dispatchWorkgroups(groups[0], groups[1]);
    this.pending++;
    this.dispatches++;
  }

  /** Copies `words` 32-bit elements between buffers (in stream order). */
  copy(src: DeviceBuffer, srcWord: number, dst: DeviceBuffer, dstWord: number, words: number): void {
    if (words <= 0) return;
    this.endPass();
    this.enc().copyBufferToBuffer(src.gpu, srcWord * 4, dst.gpu, dstWord * 4, words * 4);
    this.pending++;
  }

  /** Writes host data into a buffer after all work recorded so far. */
  write(dst: DeviceBuffer, data: Uint32Array | Float32Array | Int32Array, dstWord = 0): void {
    if (data.length === 0) return;
    // queue.writeBuffer runs before command buffers submitted later but after earlier ones: submit pending work
    // first, because `dst` may be a recycled buffer that recorded commands still read.
    if (this.encoder) this.flush();
    this.device.queue.writeBuffer(dst.gpu, dstWord * 4, data.buffer, data.byteOffset, data.byteLength);
  }

  flush(): void {
    this.endPass();
    if (!this.encoder) return;
    const cb = this.encoder.finish();
    this.encoder = null;
    this.pending = 0;
    this.device.queue.submit([cb]);
    this.submits++;
  }

  /** After a top-level operation: submit when a lot is pending, else soon (when the host goes idle). */
  endOfOperation(): void {
    if (this.pending >= FLUSH_EVERY) {
      this.flush();
      return;
    }
    if (this.encoder && !this.flushScheduled) {
      this.flushScheduled = true;
      setTimeout(() => {
        this.flushScheduled = false;
        this.flush();
      }, 0);
    }
  }

  /** Reads `words` words of a buffer back to the host (everything recorded before runs first). */
  async read(src: DeviceBuffer, words: number): Promise<Uint32Array> {
    if (words === 0) return new Uint32Array(0);
    const bytes = words * 4;
    const cls = sizeClass(bytes);
    const staging =
      this.staging.get(cls)?.pop() ?? this.device.createBuffer({ size: cls, usage: BUF_MAP_READ | BUF_COPY_DST });
    this.endPass();
    this.enc().copyBufferToBuffer(src.gpu, 0, staging, 0, bytes);
    this.flush();
    await staging.mapAsync(MAP_MODE_READ, 0, bytes);
    const out = new Uint32Array(staging.getMappedRange(0, bytes).slice(0));
    staging.unmap();
    const list = this.staging.get(cls) ?? [];
    if (list.length < 4) {
      list.push(staging);
      this.staging.set(cls, list);
    } else staging.destroy();
    return out;
  }

  /** Resolves when all submitted work has finished (benchmarks). */
  async sync(): Promise<void> {
    this.flush();
    await this.device.queue.onSubmittedWorkDone();
  }
}
