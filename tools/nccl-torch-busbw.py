#!/usr/bin/env python3
# tools/nccl-torch-busbw.py: all-reduce bandwidth of PyTorch's NCCL backend (one process per GPU),
# for the same sizes and with the same formulas as bin/nccl-allreduce-bench, so the two can be
# compared on one machine. GPU machine only; needs torch with CUDA.
# SPDX-License-Identifier: Apache-2.0
#
# Usage: tools/nccl-torch-busbw.py [--gpus N] [--min-bytes 8] [--max-bytes 1G] [--step-factor 2]
#                                  [--warmup 5] [--iters 20]
# time = (elapsed of --iters back-to-back in-place float sums, between a barrier and the
# synchronize of every rank) / iters; algbw = bytes / time; busbw = algbw * 2 (n - 1) / n.
import os

# NVLink SHARP (NVLS) stays off unless the caller turned it on: the same setting as the bench.
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")

import argparse  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402


def parse_bytes(text):
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    return int(text[:-1] if scale > 1 else text) * scale


def sizes(args):
    size, out = parse_bytes(args.min_bytes), []
    while size <= parse_bytes(args.max_bytes):
        out.append(size)
        size *= args.step_factor
    return out


def worker(rank, n, store_file, args, results):
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="file://" + store_file, rank=rank, world_size=n)
    for size in sizes(args):
        count = max(1, size // 4)
        x = torch.full((count,), float(rank + 1), device="cuda", dtype=torch.float32)
        dist.all_reduce(x)
        torch.cuda.synchronize()
        expected = n * (n + 1) / 2
        if x.min().item() != expected or x.max().item() != expected:
            raise RuntimeError(f"rank {rank}: wrong sum for {count} floats")
        for _ in range(args.warmup):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        dist.barrier()
        start = time.perf_counter()
        for _ in range(args.iters):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        end = time.perf_counter()
        times = [None] * n
        dist.all_gather_object(times, (start, end))
        if rank == 0:
            elapsed = max(e for _, e in times) - min(s for s, _ in times)
            results.append((count * 4, count, elapsed / args.iters))
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(
        description="All-reduce busbw of torch.distributed's NCCL backend, one process per GPU")
    parser.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    parser.add_argument("--min-bytes", default="8")
    parser.add_argument("--max-bytes", default="1G")
    parser.add_argument("--step-factor", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20)
    args = parser.parse_args()
    n = args.gpus
    if n < 1:
        raise SystemExit("nccl-torch-busbw: no GPU visible")
    print(f"nccl-torch-busbw: {n} GPU(s), torch {torch.__version__}, NCCL "
          f"{'.'.join(map(str, torch.cuda.nccl.version()))}, "
          f"NCCL_NVLS_ENABLE={os.environ['NCCL_NVLS_ENABLE']}")
    with tempfile.TemporaryDirectory() as tmp, mp.Manager() as manager:
        results = manager.list()
        mp.spawn(worker, args=(n, os.path.join(tmp, "store"), args, results), nprocs=n)
        factor = 2.0 * (n - 1) / n
        print(f"{'bytes':>12} {'count':>12} {'time_us':>12} {'algbw_GB/s':>12} {'busbw_GB/s':>12}")
        for size, count, seconds in results:
            algbw = size / seconds * 1e-9
            print(f"{size:12d} {count:12d} {seconds * 1e6:12.2f} {algbw:12.3f} "
                  f"{algbw * factor:12.3f}")
        if results:
            peak = max(r[0] / r[2] * 1e-9 * factor for r in results)
            print(f"summary: {n} GPU(s): peak busbw {peak:.3f} GB/s")


if __name__ == "__main__":
    main()
