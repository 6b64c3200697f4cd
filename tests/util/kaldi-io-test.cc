// tests/util/kaldi-io-test.cc: Input/Output over files, offsets, pipes; classification of
// rx/wxfilenames; ReadKaldiObject/WriteKaldiObject; errors that name the file and the OS error.
// SPDX-License-Identifier: Apache-2.0
#include "util/kaldi-io.h"

#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/testing.h"
#include "tests/util/util-testing.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace cuctx {
namespace {

TEST(KaldiIoTest, ClassifyRxfilename) {
  EXPECT_EQ(ClassifyRxfilename(""), kStandardInput);
  EXPECT_EQ(ClassifyRxfilename("-"), kStandardInput);
  EXPECT_EQ(ClassifyRxfilename(" "), kNoInput);
  EXPECT_EQ(ClassifyRxfilename("a "), kNoInput);
  EXPECT_EQ(ClassifyRxfilename(" a"), kNoInput);
  EXPECT_EQ(ClassifyRxfilename("a"), kFileInput);
  EXPECT_EQ(ClassifyRxfilename("b c|"), kPipeInput);
  EXPECT_EQ(ClassifyRxfilename("|b"), kNoInput);
  EXPECT_EQ(ClassifyRxfilename("a b c:123"), kOffsetFileInput);
  EXPECT_EQ(ClassifyRxfilename("a b c:"), kFileInput);
  EXPECT_EQ(ClassifyRxfilename("a:b"), kFileInput);
  // Table specifiers are not filenames.
  EXPECT_EQ(ClassifyRxfilename("ark:foo"), kNoInput);
  EXPECT_EQ(ClassifyRxfilename("ark,t:-"), kNoInput);
  EXPECT_EQ(ClassifyRxfilename("scp:feats.scp"), kNoInput);
  EXPECT_EQ(ClassifyRxfilename("arc:foo"), kFileInput);
}

TEST(KaldiIoTest, ClassifyWxfilename) {
  EXPECT_EQ(ClassifyWxfilename(""), kStandardOutput);
  EXPECT_EQ(ClassifyWxfilename("-"), kStandardOutput);
  EXPECT_EQ(ClassifyWxfilename(" a"), kNoOutput);
  EXPECT_EQ(ClassifyWxfilename("a"), kFileOutput);
  EXPECT_EQ(ClassifyWxfilename("b|"), kNoOutput);
  EXPECT_EQ(ClassifyWxfilename("|b"), kPipeOutput);
  EXPECT_EQ(ClassifyWxfilename("a b c:3"), kNoOutput);
  EXPECT_EQ(ClassifyWxfilename("a b c:"), kFileOutput);
  EXPECT_EQ(ClassifyWxfilename("ark,t:-"), kNoOutput);
  EXPECT_EQ(ClassifyWxfilename("ark,scp:a.ark,a.scp"), kNoOutput);
  EXPECT_EQ(ClassifyWxfilename("b,ark:x"), kNoOutput);
}

TEST(KaldiIoTest, Printable) {
  EXPECT_EQ(PrintableRxfilename("-"), "standard input");
  EXPECT_EQ(PrintableRxfilename(""), "standard input");
  EXPECT_EQ(PrintableWxfilename("-"), "standard output");
  EXPECT_EQ(PrintableRxfilename("a b"), "'a b'");
  EXPECT_EQ(PrintableWxfilename(std::string("a\x01", 2)), "'a\\x01'");
}

TEST(KaldiIoTest, FileRoundTripWithHeader) {
  test::ScratchDir dir;
  for (bool binary : {true, false}) {
    {
      Output ko(dir / "f", binary);
      WriteToken(ko.Stream(), binary, "<Hi>");
      WriteBasicType<int32>(ko.Stream(), binary, -7);
      EXPECT_TRUE(ko.Close());
    }
    EXPECT_EQ(test::ReadFileBytes(dir / "f").substr(0, 2) == std::string("\0B", 2), binary);
    bool binary_in = !binary;
    Input ki(dir / "f", &binary_in);
    EXPECT_EQ(binary_in, binary);
    ExpectToken(ki.Stream(), binary_in, "<Hi>");
    int32 v = 0;
    ReadBasicType(ki.Stream(), binary_in, &v);
    EXPECT_EQ(v, -7);
    EXPECT_EQ(Peek(ki.Stream(), binary_in), -1);
    EXPECT_EQ(ki.Close(), 0);
  }
}

TEST(KaldiIoTest, OffsetInputAndReseek) {
  test::ScratchDir dir;
  test::WriteFileBytes(dir / "f", "0123456789");
  Input ki;
  ASSERT_TRUE(ki.Open(dir / "f:3"));
  EXPECT_EQ(ki.Stream().get(), '3');
  EXPECT_EQ(static_cast<int64>(ki.Stream().tellg()), 4);
  ASSERT_TRUE(ki.Open(dir / "f:8"));  // same file: a seek
  EXPECT_EQ(ki.Stream().get(), '8');
  ASSERT_TRUE(ki.Open(dir / "f:1"));  // backwards too
  EXPECT_EQ(ki.Stream().get(), '1');
  ASSERT_TRUE(ki.Open(dir / "f"));
  EXPECT_EQ(ki.Stream().get(), '0');
  test::QuietLog quiet;
  EXPECT_FALSE(ki.Open(dir / "f:11"));  // past the end
  EXPECT_FALSE(ki.IsOpen());
}

TEST(KaldiIoTest, PipesBothWays) {
  test::ScratchDir dir;
  {
    Output ko("| gzip -c > " + dir / "x.gz", false);
    ko.Stream() << "hello pipe\n";
    EXPECT_TRUE(ko.Close());
  }
  Input ki("gunzip -c " + dir / "x.gz |");
  std::string line;
  std::getline(ki.Stream(), line);
  EXPECT_EQ(line, "hello pipe");
  EXPECT_EQ(ki.Close(), 0);
}

TEST(KaldiIoTest, FailedPipeReportsStatus) {
  Input ki("exit 3 |");
  EXPECT_EQ(ki.Stream().get(), -1);
  std::string error;
  EXPECT_EQ(ki.Close(&error), 3);
  EXPECT_TRUE(test::Contains(error, "exit 3"));
  EXPECT_TRUE(test::Contains(error, "status 3"));

  Output ko("| exit 4", true);
  std::string out_error;
  EXPECT_FALSE(ko.Close(&out_error));
  EXPECT_TRUE(test::Contains(out_error, "status 4"));

  // More than a pipe holds, to a command that never reads: the writes must fail with EPIPE (and
  // the process live on, SIGPIPE notwithstanding) and Close() report the command's status.
  Output gone("| exit 5", true);
  const std::string block(1 << 20, 'x');
  gone.Stream().write(block.data(), static_cast<std::streamsize>(block.size()));
  gone.Stream().flush();
  std::string gone_error;
  EXPECT_FALSE(gone.Close(&gone_error));
  EXPECT_TRUE(test::Contains(gone_error, "status 5")) << gone_error;
}

TEST(KaldiIoTest, OpenErrorsNameFileAndReason) {
  test::ScratchDir dir;
  test::QuietLog quiet;
  std::string text = test::ErrorText([&] { Input ki(dir / "missing"); });
  EXPECT_TRUE(test::Contains(text, "missing'"));
  EXPECT_TRUE(test::Contains(text, "No such file or directory"));
  text = test::ErrorText([&] { Input ki(dir.Path()); });
  EXPECT_TRUE(test::Contains(text, "is a directory"));
  text = test::ErrorText([&] { Output ko(dir / "no/such/dir", true); });
  EXPECT_TRUE(test::Contains(text, "No such file or directory"));
  text = test::ErrorText([&] { Output ko("ark,t:-", false); });
  EXPECT_TRUE(test::Contains(text, "table specifier"));
  text = test::ErrorText([&] { Input ki("ark:foo.ark"); });
  EXPECT_TRUE(test::Contains(text, "table specifier"));
  test::WriteFileBytes(dir / "bad", std::string("\0X", 2));
  bool binary;
  text = test::ErrorText([&] { Input ki(dir / "bad", &binary); });
  EXPECT_TRUE(test::Contains(text, "not followed by 'B'"));
}

TEST(KaldiIoTest, ReadWriteKaldiObjectLargeAndThroughPipes) {
  test::ScratchDir dir;
  test::Rng rng = test::MakeRng();
  Matrix<float> m(700, 513);  // 1.4 MB: larger than the buffer, read and written directly
  for (MatrixIndexT r = 0; r < m.NumRows(); ++r)
    for (MatrixIndexT c = 0; c < m.NumCols(); ++c) m(r, c) = static_cast<float>(rng.Gauss());
  WriteKaldiObject(m, dir / "m.mat", true);
  Matrix<float> back;
  ReadKaldiObject(dir / "m.mat", &back);
  EXPECT_TRUE(back.ApproxEqual(m, 0.0f));
  WriteKaldiObject(m, "| gzip -c > " + dir / "m.gz", true);
  Matrix<double> back2;
  ReadKaldiObject("gunzip -c " + dir / "m.gz |", &back2);
  EXPECT_EQ(back2.NumRows(), 700);
  EXPECT_EQ(back2(699, 512), static_cast<double>(m(699, 512)));

  // A truncated file names the input; a failing command is added to the message.
  test::WriteFileBytes(dir / "t.mat", test::ReadFileBytes(dir / "m.mat").substr(0, 5000));
  test::QuietLog quiet;
  EXPECT_TRUE(test::ThrowsWith([&] { ReadKaldiObject(dir / "t.mat", &back); }, "t.mat'"));
  std::string text =
      test::ErrorText([&] { ReadKaldiObject("head -c 5000 " + dir / "m.mat; exit 2 |", &back); });
  EXPECT_TRUE(test::Contains(text, "status 2"));
}

TEST(KaldiIoTest, ReadKaldiObjectMatrixRanges) {
  test::ScratchDir dir;
  Matrix<float> m(4, 3);
  for (int i = 0; i < 12; ++i) m(i / 3, i % 3) = static_cast<float>(i);
  WriteKaldiObject(m, dir / "m.mat", true);
  Matrix<double> part;
  ReadKaldiObject(dir / "m.mat[1:2]", &part);
  ASSERT_EQ(part.NumRows(), 2);
  EXPECT_EQ(part(0, 0), 3.0);
  ReadKaldiObject(dir / "m.mat[0:3,2:2]", &part);
  ASSERT_EQ(part.NumCols(), 1);
  EXPECT_EQ(part(3, 0), 11.0);
  test::QuietLog quiet;
  EXPECT_TRUE(
      test::ThrowsWith([&] { ReadKaldiObject(dir / "m.mat[0:4]", &part); }, "outside the 4 rows"));
}

}  // namespace
}  // namespace cuctx
