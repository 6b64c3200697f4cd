// tests/util/kaldi-table-test.cc: specifier parsing, scp files, byte-exact archives and scp
// indexes, and round trips of every holder through sequential, random-access (archive and scp,
// with s/cs/o), background and mapped readers.
// SPDX-License-Identifier: Apache-2.0
#include "util/kaldi-table.h"

#include "tests/testing.h"
#include "tests/util/util-testing.h"

#include "util/table-types.h"
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <vector>

namespace cuctx {
namespace {

using test::Bytes;
using test::Int32;
using test::RawInt32;

TEST(TableSpecifierTest, Rspecifiers) {
  std::string name = "x";
  RspecifierOptions opts;
  EXPECT_EQ(ClassifyRspecifier("ark:foo|", &name, &opts), kArchiveRspecifier);
  EXPECT_EQ(name, "foo|");
  EXPECT_EQ(ClassifyRspecifier("b,ark:a", &name, nullptr), kArchiveRspecifier);
  EXPECT_EQ(ClassifyRspecifier("t,scp:a", &name, nullptr), kScriptRspecifier);
  EXPECT_EQ(ClassifyRspecifier("scp,scp,b:foo|", &name, &opts), kNoRspecifier);
  EXPECT_EQ(name, "");
  EXPECT_EQ(ClassifyRspecifier("ark,scp:foo", nullptr, nullptr), kNoRspecifier);
  EXPECT_EQ(ClassifyRspecifier("ark", nullptr, nullptr), kNoRspecifier);
  EXPECT_EQ(ClassifyRspecifier("ark:foo ", nullptr, nullptr), kNoRspecifier);
  EXPECT_EQ(ClassifyRspecifier("arkk:foo", nullptr, nullptr), kNoRspecifier);
  EXPECT_EQ(ClassifyRspecifier("scp:", &name, nullptr), kScriptRspecifier);
  EXPECT_EQ(name, "");
  ASSERT_EQ(ClassifyRspecifier("s,cs,o,p,bg,ark:-", &name, &opts), kArchiveRspecifier);
  EXPECT_TRUE(opts.sorted && opts.called_sorted && opts.once && opts.permissive && opts.background);
  ASSERT_EQ(ClassifyRspecifier("ns,ncs,no,np,ark:-", &name, &opts), kArchiveRspecifier);
  EXPECT_FALSE(opts.sorted || opts.called_sorted || opts.once || opts.permissive);
}

TEST(TableSpecifierTest, Wspecifiers) {
  std::string ark = "x", scp = "y";
  WspecifierOptions opts;
  EXPECT_EQ(ClassifyWspecifier("t,ark:foo|", &ark, &scp, &opts), kArchiveWspecifier);
  EXPECT_TRUE(ark == "foo|" && scp.empty() && !opts.binary);
  EXPECT_EQ(ClassifyWspecifier("t,ark,scp:a b,c,d", &ark, &scp, &opts), kBothWspecifier);
  EXPECT_TRUE(ark == "a b" && scp == "c,d");
  EXPECT_EQ(ClassifyWspecifier("f,b,scp:x", &ark, &scp, &opts), kScriptWspecifier);
  EXPECT_TRUE(opts.flush && opts.binary && scp == "x");
  EXPECT_EQ(ClassifyWspecifier("ark,scp:nocomma", &ark, &scp, &opts), kNoWspecifier);
  EXPECT_EQ(ClassifyWspecifier(" t,ark:boo", nullptr, nullptr, nullptr), kNoWspecifier);
  EXPECT_EQ(ClassifyWspecifier("ark,s:boo", nullptr, nullptr, nullptr), kNoWspecifier);
  EXPECT_EQ(ClassifyWspecifier("", nullptr, nullptr, nullptr), kNoWspecifier);
}

TEST(TableScriptFileTest, ReadAndWrite) {
  std::vector<std::pair<std::string, std::string>> script;
  std::istringstream good(" a b\nc d \nc d e |\n");
  ASSERT_TRUE(ReadScriptFile(good, false, &script));
  ASSERT_EQ(script.size(), 3u);
  EXPECT_EQ(script[2].second, "d e |");
  std::istringstream no_value(" a \n");
  EXPECT_FALSE(ReadScriptFile(no_value, false, &script));
  std::istringstream empty_line("\n");
  EXPECT_FALSE(ReadScriptFile(empty_line, false, &script));
  std::istringstream header(std::string("\0Ba b\n", 6));
  EXPECT_FALSE(ReadScriptFile(header, false, &script));
  std::ostringstream os;
  EXPECT_TRUE(WriteScriptFile(os, {{"k1", "f.ark:12"}, {"k2", "g h |"}}));
  EXPECT_EQ(os.str(), "k1 f.ark:12\nk2 g h |\n");
}

// ---- byte-exact archives (expected bytes written out by hand)

TEST(TableBytesTest, BasicTypesBinaryAndText) {
  test::ScratchDir dir;
  {
    Int32Writer w("b,ark:" + dir / "i.ark");
    w.Write("a", 5);
    w.Write("bb", -2);
  }
  EXPECT_EQ(test::ReadFileBytes(dir / "i.ark"),
            "a " + Bytes({0, 'B'}) + Int32(5) + "bb " + Bytes({0, 'B'}) + Int32(-2));
  {
    Int32Writer w("t,ark:" + dir / "i.txt");
    w.Write("a", 5);
    w.Write("bb", -2);
  }
  EXPECT_EQ(test::ReadFileBytes(dir / "i.txt"), "a 5 \nbb -2 \n");
  {
    BoolWriter w("ark:" + dir / "b.ark");
    w.Write("x", true);
  }
  EXPECT_EQ(test::ReadFileBytes(dir / "b.ark"), "x " + Bytes({0, 'B', 'T'}));
  {
    Int32VectorWriter w("ark,t:" + dir / "v.txt");
    w.Write("u", {1, 2, 3});
    w.Write("e", {});
  }
  EXPECT_EQ(test::ReadFileBytes(dir / "v.txt"), "u 1 2 3 \ne \n");
  {
    Int32VectorWriter w("ark:" + dir / "v.ark");
    w.Write("u", {7});
  }
  EXPECT_EQ(test::ReadFileBytes(dir / "v.ark"), "u " + Bytes({0, 'B'}) + Int32(1) + Int32(7));
  {
    Int32VectorVectorWriter w("ark,t:" + dir / "vv.txt");
    w.Write("u", {{1, 2}, {}, {3}});
  }
  EXPECT_EQ(test::ReadFileBytes(dir / "vv.txt"), "u 1 2 ; ; 3 ; \n");
  {
    Int32PairVectorWriter w("ark,t:" + dir / "pv.txt");
    w.Write("u", {{1, 2}, {3, 4}});
  }
  EXPECT_EQ(test::ReadFileBytes(dir / "pv.txt"), "u 1 2 ; 3 4 \n");
  {
    TokenWriter w("ark:" + dir / "tok.ark");
    w.Write("u", "hello");
    TokenVectorWriter wv("ark:" + dir / "tv.ark");
    wv.Write("u", {"a", "bc"});
  }
  EXPECT_EQ(test::ReadFileBytes(dir / "tok.ark"), "u hello\n");
  EXPECT_EQ(test::ReadFileBytes(dir / "tv.ark"), "u a bc\n");
}

TEST(TableBytesTest, MatricesVectorsAndScpIndex) {
  test::ScratchDir dir;
  Matrix<float> m(2, 3);
  for (int i = 0; i < 6; ++i) m(i / 3, i % 3) = static_cast<float>(i + 1);
  Vector<double> v(2);
  v(0) = 1;
  v(1) = 2;
  {
    BaseFloatMatrixWriter w("ark,scp:" + dir / "m.ark" + "," + dir / "m.scp");
    w.Write("utt1", m);
    w.Write("utt2", m);
  }
  const std::string entry =
      Bytes({0, 'B'}) + "FM " + Int32(2) + Int32(3) + test::OneToNBytes<float>(6);
  EXPECT_EQ(test::ReadFileBytes(dir / "m.ark"), "utt1 " + entry + "utt2 " + entry);
  EXPECT_EQ(test::ReadFileBytes(dir / "m.scp"), "utt1 " + dir / "m.ark" + ":5\nutt2 " +
                                                    dir / "m.ark" + ":" +
                                                    std::to_string(5 + entry.size() + 5) + "\n");
  {
    DoubleVectorWriter w("ark:" + dir / "v.ark");
    w.Write("k", v);
  }
  EXPECT_EQ(test::ReadFileBytes(dir / "v.ark"),
            "k " + Bytes({0, 'B'}) + "DV " + Int32(2) + test::OneToNBytes<double>(2));
  {
    BaseFloatMatrixWriter w("ark,t:" + dir / "m.txt");
    w.Write("k", m);
  }
  EXPECT_EQ(test::ReadFileBytes(dir / "m.txt"), "k  [\n  1 2 3 \n  4 5 6 ]\n");
}

TEST(TableBytesTest, CompressedMatrixPassesThroughExactly) {
  // CM2: "CM2 ", min 0.0f, range 65535.0f, rows 1, cols 2 (raw int32), then uint16 values 1 and 2.
  const std::string cm2 = "CM2 " + Bytes({0, 0, 0, 0}) + Bytes({0x00, 0xff, 0x7f, 0x47}) +
                          RawInt32(1) + RawInt32(2) + Bytes({1, 0, 2, 0});
  CompressedMatrix cm;
  std::istringstream is(cm2);
  cm.Read(is, true);
  test::ScratchDir dir;
  {
    CompressedMatrixWriter w("ark:" + dir / "c.ark");
    w.Write("c", cm);
  }
  EXPECT_EQ(test::ReadFileBytes(dir / "c.ark"), "c " + Bytes({0, 'B'}) + cm2);
  SequentialBaseFloatMatrixReader r("ark:" + dir / "c.ark");
  ASSERT_FALSE(r.Done());
  EXPECT_EQ(r.Value()(0, 0), 1.0f);
  EXPECT_EQ(r.Value()(0, 1), 2.0f);
  SequentialGeneralMatrixReader g("ark:" + dir / "c.ark");
  EXPECT_EQ(g.Value().Type(), kCompressedMatrix);
}

// ---- round trips

template <class Holder>
std::vector<std::pair<std::string, typename Holder::T>> ReadAll(const std::string& rspecifier) {
  std::vector<std::pair<std::string, typename Holder::T>> out;
  SequentialTableReader<Holder> r(rspecifier);
  for (; !r.Done(); r.Next()) out.emplace_back(r.Key(), r.Value());
  EXPECT_TRUE(r.Close());
  return out;
}

template <class Holder>
void RoundTrip(const std::vector<std::pair<std::string, typename Holder::T>>& entries) {
  test::ScratchDir dir;
  for (const char* mode : {"b", "t"}) {
    const std::string ark = dir / "x.ark", scp = dir / "x.scp";
    {
      TableWriter<Holder> w(std::string(mode) + ",ark,scp:" + ark + "," + scp);
      for (const auto& e : entries) w.Write(e.first, e.second);
      EXPECT_TRUE(w.Close());
    }
    EXPECT_EQ((ReadAll<Holder>("ark:" + ark)), entries) << mode;
    EXPECT_EQ((ReadAll<Holder>("scp:" + scp)), entries) << mode;
    EXPECT_EQ((ReadAll<Holder>("ark,bg:" + ark)), entries) << mode;
    EXPECT_EQ((ReadAll<Holder>("scp,bg:" + scp)), entries) << mode;
    for (const char* opts : {"", "s,", "s,cs,", "o,", "cs,", "s,o,"}) {
      for (const std::string& kind : {"ark:" + ark, "scp:" + scp}) {
        RandomAccessTableReader<Holder> r(std::string(opts) + kind);
        for (const auto& e : entries) {  // entries are sorted by key
          EXPECT_TRUE(r.HasKey(e.first)) << opts << kind;
          EXPECT_EQ(r.Value(e.first), e.second) << opts << kind;
        }
        if (std::string(opts).find('s') == std::string::npos) {
          EXPECT_FALSE(r.HasKey("zzz"));
        }
      }
    }
  }
}

TEST(TableRoundTripTest, BasicHolders) {
  RoundTrip<BasicHolder<int32>>({{"a", 1}, {"b", -7}, {"c", 2147483647}});
  RoundTrip<BasicHolder<bool>>({{"a", true}, {"b", false}});
  RoundTrip<BasicHolder<double>>({{"a", 0.5}, {"b", -1024.25}});
  RoundTrip<BasicHolder<float>>({{"a", 0.125f}});
  RoundTrip<BasicVectorHolder<int32>>({{"a", {1, 2}}, {"b", {}}, {"c", {-5}}});
  RoundTrip<BasicVectorVectorHolder<int32>>({{"a", {{1, 2}, {}, {3}}}, {"b", {}}});
  RoundTrip<BasicPairVectorHolder<int32>>({{"a", {{1, 2}, {3, 4}}}, {"b", {}}});
  RoundTrip<BasicPairVectorHolder<float>>({{"a", {{0.5f, 2}}}});
  RoundTrip<TokenHolder>({{"a", "x"}, {"b", "yz"}});
  RoundTrip<TokenVectorHolder>({{"a", {"x", "y"}}, {"b", {}}});
}

template <class M>
bool SameMatrix(const M& a, const M& b) {
  if (a.NumRows() != b.NumRows() || a.NumCols() != b.NumCols()) return false;
  for (MatrixIndexT r = 0; r < a.NumRows(); ++r)
    for (MatrixIndexT c = 0; c < a.NumCols(); ++c)
      if (a(r, c) != b(r, c)) return false;
  return true;
}

TEST(TableRoundTripTest, MatricesThroughEveryReader) {
  test::ScratchDir dir;
  test::Rng rng = test::MakeRng();
  std::vector<Matrix<double>> mats;
  std::vector<std::string> keys = {"u1", "u2", "u3", "u4"};
  for (int i = 0; i < 4; ++i) {
    mats.emplace_back(1 + i, 3 + i);
    for (MatrixIndexT r = 0; r < mats[i].NumRows(); ++r)
      for (MatrixIndexT c = 0; c < mats[i].NumCols(); ++c) mats[i](r, c) = rng.Gauss();
  }
  {
    DoubleMatrixWriter w("ark,scp:" + dir / "m.ark" + "," + dir / "m.scp");
    for (int i = 0; i < 4; ++i) w.Write(keys[i], mats[i]);
  }
  SequentialDoubleMatrixReader seq("scp,bg:" + dir / "m.scp");
  for (int i = 0; i < 4; ++i, seq.Next()) {
    ASSERT_FALSE(seq.Done());
    EXPECT_EQ(seq.Key(), keys[i]);
    EXPECT_TRUE(SameMatrix(seq.Value(), mats[i]));
  }
  EXPECT_TRUE(seq.Done());
  // Random order through the scp and through an unsorted-read archive.
  for (const std::string& spec : {"scp:" + dir / "m.scp", "ark:" + dir / "m.ark"}) {
    RandomAccessDoubleMatrixReader r(spec);
    for (int i : {3, 0, 2, 1, 3}) EXPECT_TRUE(SameMatrix(r.Value(keys[i]), mats[i])) << spec;
  }
  // The Cu forms read the same archive (through the host, or a GPU when one is selected).
  SequentialDoubleCuMatrixReader cu("ark:" + dir / "m.ark");
  Matrix<double> back(cu.Value().NumRows(), cu.Value().NumCols());
  cu.Value().CopyToMat(&back);
  EXPECT_TRUE(SameMatrix(back, mats[0]));
  {
    DoubleCuMatrixWriter cw("ark:" + dir / "cu.ark");
    cw.Write("u1", cu.Value());
  }
  EXPECT_EQ(
      test::ReadFileBytes(dir / "cu.ark"),
      test::ReadFileBytes(dir / "m.ark").substr(0, test::ReadFileBytes(dir / "cu.ark").size()));
}

TEST(TableRoundTripTest, ScpRangesAndScpWriter) {
  test::ScratchDir dir;
  Matrix<float> m(4, 3);
  for (int i = 0; i < 12; ++i) m(i / 3, i % 3) = static_cast<float>(i);
  {
    BaseFloatMatrixWriter w("ark,scp:" + dir / "m.ark" + "," + dir / "m.scp");
    w.Write("a", m);
  }
  test::WriteFileBytes(dir / "r.scp", "a " + dir / "m.ark:2[1:2]\nb " + dir / "m.ark:2[,2:2]\nc " +
                                          dir / "m.ark:2[0:1,0:1]\n");
  RandomAccessBaseFloatMatrixReader r("scp:" + dir / "r.scp");
  EXPECT_EQ(r.Value("a").NumRows(), 2);
  EXPECT_EQ(r.Value("a")(0, 0), 3.0f);
  EXPECT_EQ(r.Value("b").NumCols(), 1);
  EXPECT_EQ(r.Value("b")(3, 0), 11.0f);
  EXPECT_EQ(r.Value("c")(1, 1), 4.0f);
  // "scp:" for writing: each value goes to the file its line names.
  test::WriteFileBytes(dir / "out.scp", "x " + dir / "x.mat\ny " + dir / "y.mat\n");
  {
    BaseFloatMatrixWriter w("scp:" + dir / "out.scp");
    w.Write("y", m);
  }
  Matrix<float> y;
  ReadKaldiObject(dir / "y.mat", &y);
  EXPECT_TRUE(SameMatrix(y, m));
  {
    test::QuietLog quiet;
    BaseFloatMatrixWriter w("scp:" + dir / "out.scp");
    EXPECT_TRUE(test::ThrowsWith([&] { w.Write("z", m); }, "key 'z' is not in the scp file"));
    BaseFloatMatrixWriter p("p,scp:" + dir / "out.scp");
    p.Write("z", m);  // permissive: skipped
  }
}

TEST(TableRoundTripTest, HtkMatrices) {
  test::ScratchDir dir;
  HtkMatrixHolder::T value;
  value.first.Resize(2, 3);
  value.first(1, 2) = 1.5f;
  value.second = HtkHeader{2, 100000, 12, 9};
  {
    HtkMatrixWriter w("ark,scp:" + dir / "h.ark," + dir / "h.scp");
    w.Write("u", value);
    test::QuietLog quiet;
    HtkMatrixWriter t("ark,t:" + dir / "t.ark");
    EXPECT_TRUE(test::ThrowsWith([&] { t.Write("u", value); }, "only be written in binary"));
  }
  RandomAccessHtkMatrixReader r("scp:" + dir / "h.scp");
  EXPECT_EQ(r.Value("u").first(1, 2), 1.5f);
  EXPECT_EQ(r.Value("u").second.mSamplePeriod, 100000);
  EXPECT_EQ(r.Value("u").second.mSampleKind, 9);
}

TEST(TableRoundTripTest, MappedReaderAndPipes) {
  test::ScratchDir dir;
  {
    BaseFloatVectorWriter w("ark:| gzip -c > " + dir / "spk.ark.gz");
    Vector<float> v(2);
    v(0) = 1;
    w.Write("spkA", v);
    v(0) = 2;
    w.Write("spkB", v);
  }
  test::WriteFileBytes(dir / "utt2spk", "u1 spkA\nu2 spkB\nu3 spkA\n");
  RandomAccessBaseFloatVectorReaderMapped r("ark:gunzip -c " + dir / "spk.ark.gz |",
                                            dir / "utt2spk");
  EXPECT_EQ(r.Value("u2")(0), 2.0f);
  EXPECT_EQ(r.Value("u3")(0), 1.0f);
  EXPECT_TRUE(r.HasKey("u1"));
  EXPECT_FALSE(r.HasKey("u9"));
  RandomAccessBaseFloatVectorReaderMapped plain("ark:gunzip -c " + dir / "spk.ark.gz |", "");
  EXPECT_EQ(plain.Value("spkA")(0), 1.0f);
}

}  // namespace
}  // namespace cuctx
