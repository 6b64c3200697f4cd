// cudamatrix/cu-nccl.h: NCCL collectives (all-reduce, broadcast, all-gather, reduce-scatter) on
// CuMatrix and CuVector, for data-parallel work over several GPUs.
// SPDX-License-Identifier: Apache-2.0
//
// Two ways to set up a communicator:
//
//   One process, one thread per GPU:
//     std::vector<std::unique_ptr<CuNcclComm>> comms = CuNcclComm::CreateForThreads({0, 1});
//     // thread k:
//     CuDevice::Instantiate().SelectGpuIdForThread(k);
//     CuMatrix<float> grad(...);  ... compute ...
//     comms[k]->AllReduce(&grad);  // asynchronous on thread k's stream
//
//   One process per GPU (rank r of n):
//     CuDevice::Instantiate().SelectGpuIdForThread(r % CuDevice::DeviceCount());
//     CuNcclUniqueId id = r == 0 ? CuNcclUniqueId::Create() : CuNcclUniqueId::ReadFromFile(path);
//     if (r == 0) id.WriteToFile(path);
//     CuNcclComm comm(id, n, r);
//
// NCCL itself is not linked: libnccl.so.2 is loaded with dlopen the first time an entry point
// needs it, so programs that never use NCCL run where it is not installed. A missing library is
// a cuctx::Error that names it. In a build without NCCL (CUDA=0, or no nccl.h at build time) this
// header declares the same API and every entry point throws cuctx::Error "cuctx was built without
// NCCL (CUDA=0 or no nccl.h)".
#ifndef CUCTX_CUDAMATRIX_CU_NCCL_H_
#define CUCTX_CUDAMATRIX_CU_NCCL_H_

#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace cuctx {

// The reduction of AllReduce and ReduceScatter: element-wise sum, mean over the ranks (NCCL's
// ncclAvg), maximum or minimum.
enum class CuNcclOp { kSum, kAverage, kMax, kMin };

// The 128 opaque bytes (ncclUniqueId) that every rank of a communicator must be given before it
// can join: rank 0 makes one with Create() and hands it to the others by a file, an environment
// variable or any channel of the caller's, as hex text (ToHex / FromHex). A plain value; copyable.
class CuNcclUniqueId {
 public:
  static constexpr int kBytes = 128;

  // All zero bytes (not a usable id).
  CuNcclUniqueId();

  // A new id from ncclGetUniqueId. It holds the address of a bootstrap socket that this process
  // opens, so create it in the process that will be rank 0 (or at least stay alive while the
  // ranks join). Throws cuctx::Error if NCCL cannot be loaded or fails.
  static CuNcclUniqueId Create();

  // 256 lower-case hex digits, two per byte, in byte order.
  std::string ToHex() const;
  // The inverse of ToHex (either case). Throws cuctx::Error naming the expected and the actual
  // length, or the position of the first character that is not a hex digit.
  static CuNcclUniqueId FromHex(const std::string& hex);

  // Writes the hex text (and a newline) to path.tmp.<pid>, then renames it to `path`, so that a
  // reader polling for `path` never sees half a file. Throws cuctx::Error naming the file.
  void WriteToFile(const std::string& path) const;
  // Waits until `path` exists (polling every 10 ms, up to `timeout_seconds`) and reads the id
  // from it. Throws cuctx::Error naming the path and how long it waited if the file did not
  // appear, or as FromHex for bad content.
  static CuNcclUniqueId ReadFromFile(const std::string& path, double timeout_seconds = 60);
  // Reads the hex id from the environment variable `name`. Throws cuctx::Error if it is unset,
  // or as FromHex for a bad value.
  static CuNcclUniqueId FromEnvironment(const char* name = "CUCTX_NCCL_ID");

  const unsigned char* Bytes() const { return bytes_; }
  bool operator==(const CuNcclUniqueId& other) const;
  bool operator!=(const CuNcclUniqueId& other) const { return !(*this == other); }

 private:
  unsigned char bytes_[kBytes];
};

// CuNcclComm: one rank of an NCCL communicator, bound to one GPU.
//
// Owns: one ncclComm_t (created by the constructor or CreateForThreads, destroyed by the
// destructor with ncclCommDestroy, which never throws and logs a failure). Not copyable or
// movable: hand it around by unique_ptr.
//
// Device and stream: the communicator lives on DeviceId(), the device of the thread that created
// it (or device_ids[k] for CreateForThreads). Every collective must be called from a thread bound
// to that device (CuDevice::SelectGpuIdForThread, or the process's selected device); it checks
// this and throws otherwise. The collective is enqueued on the calling thread's stream
// (cudaStreamPerThread, CuDevice::Stream()) and returns before it runs, like every Cu op: work
// queued earlier on this thread's stream is finished before it starts, work queued later waits
// for it, and reading the result on the host (CopyToMat, Sum, ...) waits as usual.
//
// Thread-safety: a communicator is used by one thread at a time (the thread bound to its
// device). Collectives of one communicator issued from several threads must not interleave.
// Different communicators may be used concurrently from their own threads.
//
// NOTE ON MATCHING CALLS: NCCL collectives are rendezvous operations. Every rank must call the
// same collectives in the same order, with the same counts, reduction, root and element type;
// otherwise the ranks wait for each other forever (a hang, not an error). The shape checks below
// run before anything is handed to NCCL, so a wrong shape on one rank throws there; but the other
// ranks have then entered the collective and will wait: after an error on one rank, call Abort()
// on the others (or end the process).
//
// Shapes: a matrix collective works on the NumRows() x NumCols() elements in row order. A matrix
// whose rows are not contiguous (Stride() != NumCols(), e.g. a CuSubMatrix column range) is packed
// into a contiguous scratch buffer on this thread's device, reduced there and copied back; packed
// matrices and vectors are handed to NCCL directly. Empty operands do nothing (on every rank,
// since shapes must match).
//
// In CPU mode (no GPU selected) no communicator can be made: the constructors throw.
class CuNcclComm {
 public:
  // One communicator of device_ids.size() ranks in this process (ncclCommInitAll): comms[k] has
  // rank k on device device_ids[k]. The caller hands comms[k] to the thread it binds to
  // device_ids[k]. The devices must be distinct and in range, and the calling thread must have a
  // GPU selected (CuDevice::Enabled(): call SelectGpuId or SelectGpuIdForThread first). Throws
  // cuctx::Error otherwise, or if NCCL fails. Leaves the calling thread on its own device.
  static std::vector<std::unique_ptr<CuNcclComm>> CreateForThreads(
      const std::vector<int>& device_ids);

  // Rank `rank` of a communicator of `num_ranks` ranks, on the calling thread's device
  // (ncclCommInitRank; for one process per GPU, or one thread per GPU with an id shared between
  // threads). Blocks until all num_ranks ranks have joined with the same id. Throws cuctx::Error
  // unless 0 <= rank < num_ranks and a GPU is selected for this thread, or if NCCL fails.
  CuNcclComm(const CuNcclUniqueId& id, int num_ranks, int rank);

  ~CuNcclComm();
  CuNcclComm(const CuNcclComm&) = delete;
  CuNcclComm& operator=(const CuNcclComm&) = delete;

  int Rank() const { return rank_; }
  int NumRanks() const { return num_ranks_; }
  // The CUDA device ordinal this rank lives on.
  int DeviceId() const { return device_id_; }

  // ---- collectives: asynchronous on the calling thread's stream ----------------------------
  // Each throws cuctx::Error, before calling NCCL, if the calling thread's device is not
  // DeviceId() ("comm of rank R is on GPU A but this thread uses GPU B; bind the thread with
  // SelectGpuIdForThread(A)"), or naming the argument and its expected and actual shape.

  // m = op over all ranks of m (element-wise), in place. Every rank passes the same shape.
  void AllReduce(CuMatrixBase<float>* m, CuNcclOp op = CuNcclOp::kSum);
  void AllReduce(CuMatrixBase<double>* m, CuNcclOp op = CuNcclOp::kSum);
  void AllReduce(CuVectorBase<float>* v, CuNcclOp op = CuNcclOp::kSum);
  void AllReduce(CuVectorBase<double>* v, CuNcclOp op = CuNcclOp::kSum);

  // Every rank's m = rank root's m, in place. 0 <= root < NumRanks(); same shape on every rank.
  void Broadcast(CuMatrixBase<float>* m, int root);
  void Broadcast(CuMatrixBase<double>* m, int root);
  void Broadcast(CuVectorBase<float>* v, int root);
  void Broadcast(CuVectorBase<double>* v, int root);

  // recv = the `send` of every rank, stacked by rank: recv has NumRanks() * send.NumRows() rows
  // (NumRanks() * send.Dim() elements for vectors) and send's columns, and rank r's block is rows
  // [r * n, (r + 1) * n) with n = send.NumRows(). send and recv must not overlap.
  void AllGather(const CuMatrixBase<float>& send, CuMatrixBase<float>* recv);
  void AllGather(const CuMatrixBase<double>& send, CuMatrixBase<double>* recv);
  void AllGather(const CuVectorBase<float>& send, CuVectorBase<float>* recv);
  void AllGather(const CuVectorBase<double>& send, CuVectorBase<double>* recv);

  // recv = block r (rank r = Rank()) of op over all ranks of send: send has NumRanks() *
  // recv.NumRows() rows (NumRanks() * recv.Dim() elements) and recv's columns, and block r is
  // rows [r * n, (r + 1) * n) with n = recv.NumRows(). send and recv must not overlap.
  void ReduceScatter(const CuMatrixBase<float>& send, CuMatrixBase<float>* recv,
                     CuNcclOp op = CuNcclOp::kSum);
  void ReduceScatter(const CuMatrixBase<double>& send, CuMatrixBase<double>* recv,
                     CuNcclOp op = CuNcclOp::kSum);
  void ReduceScatter(const CuVectorBase<float>& send, CuVectorBase<float>* recv,
                     CuNcclOp op = CuNcclOp::kSum);
  void ReduceScatter(const CuVectorBase<double>& send, CuVectorBase<double>* recv,
                     CuNcclOp op = CuNcclOp::kSum);

  // ---- failure handling -------------------------------------------------------------------
  // Throws cuctx::Error if NCCL has recorded an asynchronous error on this communicator (a peer
  // that died, a network failure; ncclCommGetAsyncError). Does not wait for the GPU. Call it
  // while waiting for a collective that does not finish.
  void CheckAsyncError();
  // Aborts the communicator (ncclCommAbort): pending collectives of this rank are cancelled and
  // its resources freed; use it on a rank whose peers died instead of waiting forever. The
  // communicator is unusable afterwards (collectives throw; the destructor does nothing more).
  void Abort();

  // The version of the loaded NCCL library as NCCL encodes it (e.g. 22809 for 2.28.9); loads
  // the library if needed. Throws cuctx::Error as Create() does.
  static int NcclVersion();

 private:
  enum class Kind { kAllReduce, kBroadcast, kAllGather, kReduceScatter };
  CuNcclComm(void* comm, int num_ranks, int rank, int device_id);
  // The checks, packing and enqueueing behind the public collectives (cu-nccl.cc). In-place
  // kinds (all-reduce, broadcast) pass the same object as send and recv.
  template <typename Real>
  void MatrixCollective(Kind kind, const CuMatrixBase<Real>& send, CuMatrixBase<Real>* recv,
                        CuNcclOp op, int root);
  template <typename Real>
  void VectorCollective(Kind kind, const CuVectorBase<Real>& send, CuVectorBase<Real>* recv,
                        CuNcclOp op, int root);
  // Enqueues one collective on contiguous device buffers of `count` elements (the send count of
  // all-gather, the receive count of reduce-scatter) on this thread's stream.
  void Enqueue(Kind kind, const void* send, void* recv, size_t count, bool is_double, CuNcclOp op,
               int root);
  // Throws unless the calling thread's device is device_id_ and the comm was not aborted.
  void CheckThreadDevice(const char* what) const;
  // Throws unless 0 <= root < NumRanks(), naming the collective.
  void CheckRoot(const char* what, int root) const;

  void* comm_ = nullptr;  // ncclComm_t (an opaque pointer; this header includes no NCCL header)
  int num_ranks_ = 0;
  int rank_ = -1;
  int device_id_ = -1;
  bool aborted_ = false;
};

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_NCCL_H_
