// cudamatrix/cu-graph.h: CuGraph: capture the device work of a piece of Cu code once as a CUDA
// graph and replay it with one launch.
// SPDX-License-Identifier: Apache-2.0
//
// A small CuMatrix op costs about what a kernel launch costs on the host (a few microseconds), so
// speech-sized work (minibatches of tens to hundreds of rows) is launch-bound. A graph replays all
// of a step's kernels with one launch:
//
//   CuMatrix<float> x(32, 256), w(256, 256), y;      // allocated before: inputs and outputs
//   CuGraph step = CuGraph::Capture([&] {
//     y.Resize(32, 256, kUndefined);                  // allocations inside become graph memory
//     CuMatrix<float> t(32, 256, kUndefined);         // so do temporaries
//     t.AddMatMat(1.0f, x, kNoTrans, w, kTrans, 0.0f);
//     y.Sigmoid(t);
//   });
//   for (...) { x.CopyFromMat(next_input); step.Launch(); use(y); }
//
// Capture runs `body` once on the calling thread with its stream (cudaStreamPerThread) in capture
// mode (cudaStreamCaptureModeThreadLocal: other threads keep running eagerly): kernels, cuBLAS
// calls and device-to-device copies are recorded, not run. Launch() replays them on the calling
// thread's stream, with the same pointers and sizes every time: change inputs by writing into the
// matrices the graph reads, never by reallocating them. Host-side effects of `body` happen once,
// at capture.
//
// Memory. Every Malloc/MallocPitch the capturing thread makes during the capture is served by a
// private pool that the graph owns (a CuMemoryAllocator over its own upstream: with VMM, its own
// reserved range), so memory the graph uses is never handed to anyone else while the graph
// exists: temporaries created and destroyed inside `body` return to the private pool only
// (stream order inside the graph keeps their reuse correct), and memory that escapes the capture
// (y above) stays valid after the graph is destroyed until it is freed. Eager memory freed during
// the capture is kept by the graph until it is destroyed, since replays may still use it. The
// cuBLAS workspace of the capturing thread is swapped for one from the private pool during the
// capture, so replays never share a workspace with eager cuBLAS calls. The pool's size is
// MemoryBytes(); destroying the graph waits for the device and gives the pool back.
//
// What cannot be captured. CUDA forbids synchronizing and host<->device copies from pageable
// memory while capturing, so every op whose result goes to the host (Sum(), Max(), Trace(),
// ApproxEqual(), CopyToMat into a Matrix, element reads, ...), SynchronizeGpu() and copies from
// or to the host throw cuctx::Error naming the op during a capture; the capture is abandoned and
// nothing leaks. The device-result forms (CuMatrixBase::Sum(CuValue), Max/Min/Trace likewise;
// see cu-matrix.h and cu-vector.h) stay on the device and can be captured. Random fills (CuRand,
// SetRandn, SetRandUniform) are refused too (cuctx::Error naming the op): whether a replay would
// repeat the numbers drawn at capture or continue the sequence is cuRAND's business, so cuctx does
// not let a graph depend on either. The handles of cuBLAS, cuSPARSE and cuRAND are made before the
// capture starts (making one is not capturable).
//
// Device-wide waits (SynchronizeGpu(), cudaFree or unmapping when the caching allocator gives
// memory back, destroying a graph) of a device are held back while a thread captures on that
// device (or, for memory given back, on a device that maps it through peer access), and captures
// wait for them: keep captured bodies short. The gate that does this is per device
// (internal/cu-capture-gate.h): a capture on GPU 1 does not hold back GPU 0.
//
// CPU mode (no GPU selected): Capture() keeps `body` and Launch() runs it with Capturing() true,
// so the ops that name themselves above throw there too and the same program works without a
// GPU (plain host<->"device" copies are host copies there and do not throw); MemoryBytes() is 0.
//
// Thread-safety: Capture() may run on several threads at once, each capturing its own graph. A
// CuGraph may be launched from any thread (on that thread's stream) but not concurrently with its
// own destruction; launches from two threads at once run concurrently on their streams and must
// not write the same memory. Nested captures are an error.
#ifndef CUCTX_CUDAMATRIX_CU_GRAPH_H_
#define CUCTX_CUDAMATRIX_CU_GRAPH_H_

#include <cstddef>
#include <functional>
#include <memory>

namespace cuctx {

class CuGraph {
 public:
  // An empty graph: Launch() does nothing.
  CuGraph();
  CuGraph(CuGraph&& other) noexcept;
  CuGraph& operator=(CuGraph&& other) noexcept;
  CuGraph(const CuGraph&) = delete;
  CuGraph& operator=(const CuGraph&) = delete;
  // Waits for the device if the graph was captured on it, then frees the graph and its pool
  // (memory that escaped the capture and is still allocated is given back when it is freed).
  ~CuGraph();

  // Captures the device work of `body` (see the file comment). Throws cuctx::Error when the
  // calling thread already captures, when `body` throws (after abandoning the capture), or when
  // CUDA rejects the capture (the message names the CUDA call).
  static CuGraph Capture(const std::function<void()>& body);

  // Replays the captured work on the calling thread's stream (asynchronous, like a kernel).
  void Launch();

  bool Empty() const;
  // Kernel, copy and memset nodes of the graph (0 in CPU mode).
  size_t NumNodes() const;
  // Device memory held by the graph's private pool (0 in CPU mode).
  size_t MemoryBytes() const;

  // True while the calling thread captures a graph.
  static bool Capturing();

  struct State;  // the graph, its executable form and its pool (cu-graph.cc)

 private:
  std::unique_ptr<State> state_;
};

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_GRAPH_H_
