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
// Memory. Every Malloc/MallocPitch the capturing thread makes during the capture (temporaries,
// outputs, the graph's cuBLAS workspace) is graph memory, held in one of three ways
// (CuGraphMemory; the default is kSharedPool, or what CUCTX_GRAPH_MEMORY=shared|nodes|private or
// SetDefaultMemory() says; BENCHMARKS.md has the measurements behind the choice):
//   kSharedPool (default): a CuGraphPool (below) that several captures use, the capturing
//     thread's own unless one is given. Memory a capture frees is reused by later captures into
//     the same pool, so 16 graphs of one step for 16 minibatch sizes hold about what the largest
//     alone does, with one cuBLAS workspace for all. The rule that comes with it: two graphs of
//     one pool must never run at the same time (launch them from one thread, or synchronize in
//     between); in any order is fine. Captures into one pool run one at a time (a second thread's
//     throws). Memory that escapes a capture (y above) and is freed later stays reserved for its
//     graph, which writes it at every replay, until that graph is destroyed. MemoryBytes() is the
//     pool's size; the pool gives its memory back when it and its graphs are gone.
//   kNodes: graph memory nodes. Allocations go through cudaMallocAsync/cudaFreeAsync on the
//     capturing stream, so they become allocation and free nodes of the graph: their addresses
//     are fixed for the graph's life, and the driver maps physical memory at launch and shares it
//     between graphs (graphs may run concurrently). Memory that escapes the capture stays
//     allocated after a launch; the graph is instantiated with
//     cudaGraphInstantiateFlagAutoFreeOnLaunch, so the next Launch() frees and allocates it again
//     at the same address (its contents are the new launch's). Freeing it (y's destructor) gives
//     it back with cudaFreeAsync on the freeing thread's stream; if the graph relaunched it since,
//     the graph's destruction frees it again. MemoryBytes() is the sum of the graph's
//     allocations; the physical memory that all graphs of a device hold is the driver's
//     (DeviceGraphMemory()), and destroying a graph trims what no graph uses
//     (cudaDeviceGraphMemTrim), as does ReleaseUnusedMemory(). The driver maps in coarse chunks
//     and cannot share escaping memory, so this holds more than a shared pool (BENCHMARKS.md).
//   kPrivatePool: a pool of the graph's own (a caching allocator over its own upstream), given
//     back when the graph is destroyed; MemoryBytes() is its size. Graphs may run concurrently.
// In every mode memory the graph uses is never handed to an eager caller while the graph exists:
// temporaries created and destroyed inside `body` go back to graph memory only (stream order
// inside the graph keeps their reuse correct), memory that escapes the capture stays valid after
// the graph is destroyed until it is freed, and eager memory freed during the capture is kept by
// the graph until it is destroyed, since replays may still use it. The cuBLAS workspace of the
// capturing thread is swapped for one in graph memory during the capture, so replays never share
// a workspace with eager cuBLAS calls. Destroying the graph waits for the device.
//
// Captures made outside cuctx. When the calling thread's stream is being captured by someone else
// (a cudaStreamBeginCapture of cudaStreamPerThread around Cu code, another framework's capture),
// cuctx's allocations and frees during it go to a private pool that the captured graph owns
// through a CUDA user object (internal/cu-foreign-capture.h), released when CUDA destroys the
// graph; the ops that cannot be captured throw the errors below there too.

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
// Thread-safety: Capture() may run on several threads at once, each capturing its own graph (by
// default into its own thread's pool). A CuGraph may be launched from any thread (on that
// thread's stream) but not concurrently with its own destruction; launches from two threads at
// once run concurrently on their streams and must not write the same memory, nor be two graphs of
// one pool (kSharedPool). Nested captures are an error.
#ifndef CUCTX_CUDAMATRIX_CU_GRAPH_H_
#define CUCTX_CUDAMATRIX_CU_GRAPH_H_

#include <cstddef>
#include <functional>
#include <memory>

namespace cuctx {

// How a capture holds its memory (see "Memory" above).
enum class CuGraphMemory {
  kNodes,       // graph memory nodes: the driver shares physical memory between graphs
  kSharedPool,  // a CuGraphPool shared with other captures (the default)
  kPrivatePool  // a pool of the graph's own
};

// A memory pool that several captures share (CuGraphMemory::kSharedPool). Copies refer to the
// same pool; the pool lives while a copy or a graph captured into it does, and gives its memory
// back then. Thread-safety: captures into it run one at a time (a concurrent one throws); its
// graphs may be launched from any thread but never two at the same time (not checked: that
// would cost a device wait per launch).
class CuGraphPool {
 public:
  CuGraphPool();
  // Device memory the pool holds (0 before its first capture and in CPU mode).
  size_t MemoryBytes() const;
  struct State;

 private:
  std::shared_ptr<State> state_;
  friend class CuGraph;
};

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
  // The same, holding the graph's memory as `memory` says (kSharedPool: the thread's own pool).
  static CuGraph Capture(const std::function<void()>& body, CuGraphMemory memory);
  // The same, in `pool` (kSharedPool).
  static CuGraph Capture(const std::function<void()>& body, const CuGraphPool& pool);

  // The mode Capture(body) uses: SetDefaultMemory's, else CUCTX_GRAPH_MEMORY's (shared, nodes or
  // private; anything else is an error), else kSharedPool.
  static CuGraphMemory DefaultMemory();
  static void SetDefaultMemory(CuGraphMemory memory);
  static const char* MemoryName(CuGraphMemory memory);

  // Replays the captured work on the calling thread's stream (asynchronous, like a kernel).
  void Launch();

  bool Empty() const;
  // Kernel, copy and memset nodes of the graph (0 in CPU mode).
  size_t NumNodes() const;
  // Device memory of the graph (see "Memory" above; 0 in CPU mode).
  size_t MemoryBytes() const;
  // Bytes the capture allocated and had not freed when it ended: the graph's outputs, which stay
  // its memory while the caller holds them (as allocated, row padding included; 0 in CPU mode).
  size_t EscapedBytes() const;
  CuGraphMemory Memory() const;

  // The driver's graph-memory counters of the calling thread's device (kNodes graphs of the whole
  // process; cudaDeviceGetGraphMemAttribute), in bytes; all 0 in CPU mode.
  struct DriverMemory {
    size_t used = 0, used_high = 0, reserved = 0, reserved_high = 0;
  };
  static DriverMemory DeviceGraphMemory();
  // Gives back graph memory nothing uses: the physical memory the driver keeps for graphs of the
  // calling thread's device (cudaDeviceGraphMemTrim) and the pools of graphs captured outside
  // cuctx that CUDA has destroyed. Waits for the device; not while capturing.
  static void ReleaseUnusedMemory();

  // True while the calling thread captures a graph.
  static bool Capturing();

  struct State;  // the graph, its executable form and its memory (cu-graph.cc)

 private:
  static CuGraph CaptureInto(const std::function<void()>& body, CuGraphMemory memory,
                             std::shared_ptr<CuGraphPool::State> pool);

  std::unique_ptr<State> state_;
};

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_GRAPH_H_
