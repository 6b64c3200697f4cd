// bin/table-io-bench.cc: throughput of Kaldi table I/O (util/kaldi-table.h) on a float feature
// archive, each figure against raw read()/write() of the same bytes in the same run.
// SPDX-License-Identifier: Apache-2.0
//
// Writes --num-matrices matrices of --rows x --cols floats with BaseFloatMatrixWriter
// ("ark,scp:"), then reads them back sequentially (SequentialBaseFloatMatrixReader, "ark:") and in
// a shuffled key order through the scp (RandomAccessBaseFloatMatrixReader, "scp:"). The files are
// in --dir and still in the page cache when read; they are removed at the end (also on errors).
#include "base/random.h"
#include "base/timer.h"
#include "cutool/tool.h"

#include "util/table-types.h"
#include <algorithm>
#include <cstdio>
#include <fcntl.h>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

const char* kUsage =
    "Measures Kaldi table I/O: writing a float feature archive with its scp index, reading it\n"
    "sequentially, and random access through the scp in shuffled key order; each as GiB/s and as "
    "a\n"
    "ratio to raw read()/write() of the same bytes (1 MiB calls) in the same run. The default is\n"
    "1000 matrices of 1000 x 256 floats (1 GiB) in /tmp; the files are removed at the end.\n"
    "\n"
    "Usage: table-io-bench [options]\n"
    "Exit status: 0 measured; 1 an I/O error; 2 usage error.\n";

struct Options {
  std::string dir = "/tmp";
  int num_matrices = 1000, rows = 1000, cols = 256, repeats = 3;
};

// Removes the bench files when it goes out of scope.
struct Cleanup {
  std::vector<std::string> paths;
  ~Cleanup() {
    for (const std::string& p : paths) ::unlink(p.c_str());
  }
};

double RawWrite(const std::string& path, size_t bytes) {
  std::vector<char> block(size_t(1) << 20, 'x');
  cuctx::Timer timer;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) CUCTX_ERR << "cannot create " << path;
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min(block.size(), bytes - done);
    if (::write(fd, block.data(), n) != static_cast<ssize_t>(n)) CUCTX_ERR << "write failed";
    done += n;
  }
  ::close(fd);
  return timer.Elapsed();
}

double RawRead(const std::string& path, size_t* bytes) {
  std::vector<char> block(size_t(1) << 20);
  cuctx::Timer timer;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) CUCTX_ERR << "cannot open " << path;
  *bytes = 0;
  for (ssize_t n; (n = ::read(fd, block.data(), block.size())) > 0;)
    *bytes += static_cast<size_t>(n);
  ::close(fd);
  return timer.Elapsed();
}

void Print(const char* what, size_t bytes, double seconds, double raw_seconds, const char* raw) {
  const double gib = static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0);
  std::printf("%-34s %7.2f GiB/s   raw %-6s %7.2f GiB/s   ratio %.2f\n", what, gib / seconds, raw,
              gib / raw_seconds, raw_seconds / seconds);
}

int Run(const Options& o) {
  using namespace cuctx;
  const std::string ark = o.dir + "/cuctx-table-bench.ark", scp = o.dir + "/cuctx-table-bench.scp",
                    raw = o.dir + "/cuctx-table-bench.raw";
  Cleanup cleanup{{ark, scp, raw}};
  Matrix<float> m(o.rows, o.cols);
  for (MatrixIndexT r = 0; r < m.NumRows(); ++r)
    for (MatrixIndexT c = 0; c < m.NumCols(); ++c) m(r, c) = static_cast<float>(r * 0.5 + c);
  std::vector<std::string> keys;
  for (int i = 0; i < o.num_matrices; ++i) {
    char key[32];
    std::snprintf(key, sizeof(key), "utt%06d", i);
    keys.push_back(key);
  }
  std::printf("table-io-bench: %d matrices of %d x %d floats in %s\n", o.num_matrices, o.rows,
              o.cols, o.dir.c_str());
  std::mt19937 rng(20261127);
  for (int rep = 0; rep < o.repeats; ++rep) {
    // Both writes go to new files (truncating last run's 1 GiB would be timed otherwise).
    ::unlink(ark.c_str());
    ::unlink(scp.c_str());
    Timer write_timer;
    {
      BaseFloatMatrixWriter writer("ark,scp:" + ark + "," + scp);
      for (const std::string& k : keys) writer.Write(k, m);
      if (!writer.Close()) CUCTX_ERR << "closing the archive failed";
    }
    const double write_s = write_timer.Elapsed();
    size_t bytes = 0;
    RawRead(ark, &bytes);  // size, and a warm page cache
    const double raw_write_s = RawWrite(raw, bytes);
    ::unlink(raw.c_str());

    const double raw_read_s = RawRead(ark, &bytes);
    Timer seq_timer;
    double checksum = 0;
    int count = 0;
    for (SequentialBaseFloatMatrixReader reader("ark:" + ark); !reader.Done(); reader.Next()) {
      checksum += reader.Value()(0, 1);
      ++count;
    }
    const double seq_s = seq_timer.Elapsed();
    std::vector<std::string> order = keys;
    std::shuffle(order.begin(), order.end(), rng);
    Timer random_timer;
    {
      RandomAccessBaseFloatMatrixReader reader("scp:" + scp);
      for (const std::string& k : order) checksum += reader.Value(k)(0, 1);
    }
    const double random_s = random_timer.Elapsed();
    if (count != o.num_matrices || checksum != 2.0 * o.num_matrices)
      CUCTX_ERR << "read back " << count << " matrices, checksum " << checksum;
    std::printf("run %d (%.3f GiB):\n", rep + 1, bytes / (1024.0 * 1024.0 * 1024.0));
    Print("write   ark,scp:", bytes, write_s, raw_write_s, "write");
    Print("read    ark: (sequential)", bytes, seq_s, raw_read_s, "read");
    Print("read    scp: (random access)", bytes, random_s, raw_read_s, "read");
    std::printf("%-34s %7.2f (scp random access / sequential)\n", "", seq_s / random_s);
  }
  return kToolExitOk;
}

}  // namespace

int main(int argc, char* argv[]) {
  Options o;
  return cuctx::RunTool(
      argc, argv, cuctx::ToolSpec{kUsage, 0, 0},
      [&](cuctx::ParseOptions* po) {
        po->Register("dir", &o.dir, "Folder for the archive, its scp and the raw-I/O file");
        po->Register("num-matrices", &o.num_matrices, "Number of matrices in the archive");
        po->Register("rows", &o.rows, "Rows of each matrix");
        po->Register("cols", &o.cols, "Columns of each matrix");
        po->Register("repeats", &o.repeats, "How many times to repeat the measurements");
      },
      [&](const cuctx::ToolArgs&) {
        if (o.num_matrices < 1 || o.rows < 1 || o.cols < 2 || o.repeats < 1)
          throw cuctx::ToolUsageError(
              "--num-matrices, --rows and --repeats must be >= 1 and --cols >= 2");
        return Run(o);
      });
}
