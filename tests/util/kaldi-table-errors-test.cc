// tests/util/kaldi-table-errors-test.cc: what tables do with bad input: truncated and malformed
// archives (messages name the specifier, the key and the byte offset), missing keys, failing
// pipes, permissive reading, writers that refuse an entry without leaving part of it, invalid
// specifiers, and a sweep of truncations and corruptions that must never crash.
// SPDX-License-Identifier: Apache-2.0
#include "tests/testing.h"
#include "tests/util/util-testing.h"

#include "util/kaldi-table.h"
#include "util/table-types.h"
#include <gtest/gtest.h>
#include <string>

namespace cuctx {
namespace {

class TableErrorsTest : public ::testing::Test {
 protected:
  // Writes three 2x3 float matrices u1, u2, u3 to dir/m.ark; returns the archive's bytes.
  std::string WriteThree() {
    Matrix<float> m(2, 3);
    m.Set(1.5f);
    BaseFloatMatrixWriter w("ark:" + dir_ / "m.ark");
    for (const char* k : {"u1", "u2", "u3"}) w.Write(k, m);
    EXPECT_TRUE(w.Close());
    return test::ReadFileBytes(dir_ / "m.ark");
  }
  test::ScratchDir dir_;
  test::QuietLog quiet_;
};

TEST_F(TableErrorsTest, TruncatedArchiveNamesSpecifierKeyAndOffset) {
  const std::string bytes = WriteThree();
  const size_t entry = bytes.size() / 3;  // "u1 ", "\0B", "FM ", two int32s of 5 bytes, 24 bytes
  ASSERT_EQ(entry, 42u);
  test::WriteFileBytes(dir_ / "t.ark", bytes.substr(0, entry + 20));
  const std::string spec = "ark:" + dir_ / "t.ark";
  SequentialBaseFloatMatrixReader r(spec);
  ASSERT_FALSE(r.Done());
  EXPECT_EQ(r.Key(), "u1");
  std::string text = test::ErrorText([&] { r.Next(); });
  EXPECT_TRUE(test::Contains(text, "'" + spec + "'"));
  EXPECT_TRUE(test::Contains(text, "entry 'u2'"));
  EXPECT_TRUE(test::Contains(text, "data at byte " + std::to_string(entry + 3)));
  EXPECT_TRUE(test::Contains(text, "truncated"));
  EXPECT_TRUE(r.Done());
}

TEST_F(TableErrorsTest, MalformedArchives) {
  test::WriteFileBytes(dir_ / "a", "abc");
  std::string text =
      test::ErrorText([&] { SequentialBaseFloatMatrixReader r("ark:" + dir_ / "a"); });
  EXPECT_TRUE(test::Contains(text, "after the key \"abc\" expected a space, found end of stream"));
  test::WriteFileBytes(dir_ / "b", "k1 [ 1 2 ]\nk2 [ 1 x ]\n");
  SequentialBaseFloatVectorReader r("ark:" + dir_ / "b");
  EXPECT_EQ(r.Value().Dim(), 2);
  text = test::ErrorText([&] { r.Next(); });
  EXPECT_TRUE(test::Contains(text, "entry 'k2' (data at byte 14)"));
  EXPECT_TRUE(test::Contains(text, "\"x\""));
  test::WriteFileBytes(dir_ / "c", std::string("k \0X", 4));
  text = test::ErrorText([&] { SequentialInt32Reader r2("ark:" + dir_ / "c"); });
  EXPECT_TRUE(test::Contains(text, "entry 'k'"));
  EXPECT_TRUE(test::Contains(text, "not followed by 'B'"));
}

TEST_F(TableErrorsTest, MissingKeysAndFiles) {
  WriteThree();
  RandomAccessBaseFloatMatrixReader r("ark:" + dir_ / "m.ark");
  EXPECT_FALSE(r.HasKey("nope"));
  std::string text = test::ErrorText([&] { r.Value("nope"); });
  EXPECT_TRUE(test::Contains(text, "key 'nope' is not in archive 'ark:" + dir_ / "m.ark'"));
  test::WriteFileBytes(dir_ / "x.scp", "u1 " + dir_ / "m.ark:3\nu2 " + dir_ / "gone.ark:3\n");
  RandomAccessBaseFloatMatrixReader s("scp:" + dir_ / "x.scp");
  EXPECT_EQ(s.Value("u1").NumRows(), 2);
  text = test::ErrorText([&] { s.Value("nope"); });
  EXPECT_TRUE(test::Contains(text, "key 'nope' is not in scp"));
  text = test::ErrorText([&] { s.Value("u2"); });
  EXPECT_TRUE(test::Contains(text, "entry 'u2'"));
  EXPECT_TRUE(test::Contains(text, "gone.ark"));
  // Permissive: the unreadable entry is skipped / reported absent.
  RandomAccessBaseFloatMatrixReader p("p,scp:" + dir_ / "x.scp");
  EXPECT_FALSE(p.HasKey("u2"));
  SequentialBaseFloatMatrixReader ps("p,scp:" + dir_ / "x.scp");
  int n = 0;
  for (; !ps.Done(); ps.Next()) ++n;
  EXPECT_EQ(n, 1);
}

TEST_F(TableErrorsTest, PermissiveArchiveStopsAtTheError) {
  const std::string bytes = WriteThree();
  test::WriteFileBytes(dir_ / "t.ark", bytes.substr(0, 42 + 20));
  SequentialBaseFloatMatrixReader r("p,ark:" + dir_ / "t.ark");
  int n = 0;
  for (; !r.Done(); r.Next()) ++n;
  EXPECT_EQ(n, 1);
  EXPECT_TRUE(r.Close());
}

TEST_F(TableErrorsTest, FailedPipeReportsExitStatus) {
  WriteThree();
  const std::string spec = "ark:cat " + dir_ / "m.ark" + "; exit 3 |";
  SequentialBaseFloatMatrixReader r(spec);
  r.Next();
  r.Next();
  std::string text = test::ErrorText([&] { r.Next(); });
  EXPECT_TRUE(test::Contains(text, "exited with status 3"));
  EXPECT_TRUE(test::Contains(text, spec));
  // A command that dies mid-archive: the truncation and the status are both reported.
  text = test::ErrorText([&] {
    SequentialBaseFloatMatrixReader t("ark:head -c 60 " + dir_ / "m.ark" + "; exit 1 |");
    t.Next();
  });
  EXPECT_TRUE(test::Contains(text, "entry 'u2'"));
  EXPECT_TRUE(test::Contains(text, "status 1"));
}

TEST_F(TableErrorsTest, WriterNeverLeavesHalfAnEntry) {
  {
    TokenWriter w("ark:" + dir_ / "t.ark");
    w.Write("a", "ok");
    EXPECT_TRUE(test::ThrowsWith([&] { w.Write("b", "not a token"); }, "entry 'b'"));
    EXPECT_TRUE(test::ThrowsWith([&] { w.Write("bad key", "x"); }, "invalid key"));
    EXPECT_TRUE(test::ThrowsWith([&] { w.Write("", "x"); }, "invalid key"));
    w.Write("c", "fine");
  }
  EXPECT_EQ(test::ReadFileBytes(dir_ / "t.ark"), "a ok\nc fine\n");
  // "f": each entry is in the file as soon as Write returns.
  Int32Writer f("f,ark:" + dir_ / "f.ark");
  f.Write("k", 1);
  EXPECT_EQ(test::ReadFileBytes(dir_ / "f.ark").size(), 2u + 2u + 5u);
  Int32Writer nf("ark:" + dir_ / "nf.ark");
  nf.Write("k", 1);
  EXPECT_EQ(test::ReadFileBytes(dir_ / "nf.ark").size(), 0u);
}

// A value whose Write puts out some bytes and then fails.
struct HalfWritten {
  void Write(std::ostream& os, bool) const {
    os << "partial data";
    CUCTX_ERR << "disk on fire";
  }
  void Read(std::istream&, bool) {}
};

TEST_F(TableErrorsTest, ValueFailingMidWriteLeavesNothing) {
  {
    Int32Writer ok("ark:" + dir_ / "w.ark");
    ok.Write("a", 1);
  }
  const std::string before = test::ReadFileBytes(dir_ / "w.ark");
  {
    TableWriter<KaldiObjectHolder<HalfWritten>> w("f,ark,scp:" + dir_ / "h.ark," + dir_ / "h.scp");
    std::string text = test::ErrorText([&] { w.Write("k", HalfWritten()); });
    EXPECT_TRUE(test::Contains(text, "entry 'k'"));
    EXPECT_TRUE(test::Contains(text, "disk on fire"));
    EXPECT_TRUE(test::Contains(text, "nothing of it was written"));
  }
  EXPECT_EQ(test::ReadFileBytes(dir_ / "h.ark"), "");
  EXPECT_EQ(test::ReadFileBytes(dir_ / "h.scp"), "");
  EXPECT_EQ(before.size(), 9u);
}

TEST_F(TableErrorsTest, BackgroundReaderPassesErrorsOn) {
  const std::string bytes = WriteThree();
  test::WriteFileBytes(dir_ / "t.ark", bytes.substr(0, 42 + 20));
  SequentialBaseFloatMatrixReader r("bg,ark:" + dir_ / "t.ark");
  ASSERT_FALSE(r.Done());
  EXPECT_EQ(r.Key(), "u1");
  EXPECT_EQ(r.Value().NumRows(), 2);
  std::string text = test::ErrorText([&] { r.Next(); });
  EXPECT_TRUE(test::Contains(text, "entry 'u2'"));
  EXPECT_TRUE(r.Done());
  EXPECT_TRUE(r.Close());
}

TEST_F(TableErrorsTest, InvalidSpecifiersAndOpen) {
  std::string text = test::ErrorText([] { SequentialInt32Reader r("foo.ark"); });
  EXPECT_TRUE(test::Contains(text, "invalid rspecifier 'foo.ark'"));
  text = test::ErrorText([] { Int32Writer w("ark,x:foo.ark"); });
  EXPECT_TRUE(test::Contains(text, "invalid wspecifier"));
  text = test::ErrorText([] { Int32Writer w("ark,scp:-,x.scp"); });
  EXPECT_TRUE(test::Contains(text, "must be a file"));
  SequentialInt32Reader r;
  EXPECT_FALSE(r.Open("ark:" + dir_ / "missing.ark"));
  EXPECT_FALSE(r.IsOpen());
  RandomAccessInt32Reader ra;
  EXPECT_FALSE(ra.Open("scp:" + dir_ / "missing.scp"));
  Int32Writer w;
  EXPECT_FALSE(w.Open("ark:" + dir_ / "no/dir/x.ark"));
  EXPECT_TRUE(test::ThrowsWith([&] { r.Value(); }, "not open"));
}

TEST_F(TableErrorsTest, TruncationsAndCorruptionsNeverCrash) {
  std::string bytes = WriteThree();
  {
    Int32VectorVectorWriter w("ark:" + dir_ / "vv.ark");
    w.Write("a", {{1, 2}, {3}});
    w.Write("b", {{}});
  }
  const std::string vv = test::ReadFileBytes(dir_ / "vv.ark");
  test::Rng rng = test::MakeRng();
  int errors = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const bool matrices = trial % 2 == 0;
    std::string data = matrices ? bytes : vv;
    if (trial % 4 < 2) {
      data = data.substr(0, static_cast<size_t>(rng.Int(0, static_cast<int64_t>(data.size()))));
    } else {
      for (int k = 0; k < 3; ++k)
        data[static_cast<size_t>(rng.Int(0, static_cast<int64_t>(data.size()) - 1))] =
            static_cast<char>(rng.Int(0, 255));
    }
    test::WriteFileBytes(dir_ / "bad.ark", data);
    try {
      if (matrices) {
        for (SequentialBaseFloatMatrixReader r("ark:" + dir_ / "bad.ark"); !r.Done(); r.Next()) {
        }
        RandomAccessBaseFloatMatrixReader ra("ark:" + dir_ / "bad.ark");
        ra.HasKey("u3");
      } else {
        for (SequentialInt32VectorVectorReader r("ark:" + dir_ / "bad.ark"); !r.Done(); r.Next()) {
        }
      }
    } catch (const Error&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 100);
}

}  // namespace
}  // namespace cuctx
