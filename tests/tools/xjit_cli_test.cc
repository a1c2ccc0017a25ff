// End-to-end tests of the `xjit` command line (shared/DESIGN.md, "The xjit
// command line"): runs the built binary (path in $XJIT, set by meson) on
// modules and .npy files written here by hand, and checks exit codes, stdout,
// stderr and the bytes of the .npy files it writes. The jit backend's results
// are checked against hand-computed values and against the interpreter's.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

extern char** environ;

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

namespace fs = std::filesystem;

// The baseline instruction set of the host's jit target, the start of its
// `target:` line, and its f32 addition in the assembly listing.
#if defined(__aarch64__)
constexpr const char* kBaseIsa = "--isa=neon";
constexpr const char* kBaseTarget = "target: aarch64 neon";
constexpr const char* kAddF32 = "\\bfadd\\b";
constexpr const char* kForeignIsa = "--isa=avx2";
#else
constexpr const char* kBaseIsa = "--isa=sse4";
constexpr const char* kBaseTarget = "target: x86-64 sse";
constexpr const char* kAddF32 = "\\badd[ps]s\\b";
constexpr const char* kForeignIsa = "--isa=neon";
#endif

struct Result {
  int exit_code = -1;  // -1 when the process died from a signal
  int signal = 0;
  std::string out;
  std::string err;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteFile(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

// A version 1.0 .npy file exactly as numpy.save writes it (the header padded
// with spaces to 118 bytes including its newline).
std::string Npy(const std::string& descr, const std::string& shape, const std::string& data) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  dict.append(117 - dict.size(), ' ');
  dict.push_back('\n');
  return std::string("\x93NUMPY\x01\x00", 8) + Bytes({118, 0}) + dict + data;
}

std::string F32(std::initializer_list<float> values) {
  std::string out;
  for (float v : values) {
    char b[4];
    std::memcpy(b, &v, 4);  // the test machines are little-endian
    out.append(b, 4);
  }
  return out;
}

std::string S32(std::initializer_list<int32_t> values) {
  std::string out;
  for (int32_t v : values) {
    char b[4];
    std::memcpy(b, &v, 4);
    out.append(b, 4);
  }
  return out;
}

constexpr char kAdd[] = R"(HloModule add

ENTRY main {
  a = f32[2,3]{1,0} parameter(0)
  b = f32[2,3]{1,0} parameter(1)
  ROOT sum = f32[2,3]{1,0} add(a, b)
}
)";

constexpr char kTuple[] = R"(HloModule pair

ENTRY main {
  x = s32[3]{0} parameter(0)
  n = s32[3]{0} negate(x)
  c = f32[] constant(2.5)
  ROOT t = (s32[3]{0}, f32[]) tuple(n, c)
}
)";

constexpr char kColumnMajor[] = R"(HloModule column_major

ENTRY main {
  p = f32[2,3]{0,1} parameter(0)
  ROOT n = f32[2,3]{0,1} negate(p)
}
)";

// Tiles, padding and packed sub-byte elements: still C order in the files.
constexpr char kTiled[] = R"(HloModule tiled

ENTRY main {
  p = f32[2,3]{0,1:T(2,2)(1,2)} parameter(0)
  ROOT n = f32[2,3]{1,0:PD(3,4)} negate(p)
}
)";

constexpr char kPackedS4[] = R"(HloModule packed

ENTRY main {
  p = s4[3]{0:E(4)} parameter(0)
  ROOT n = s4[3]{0:E(4)} negate(p)
}
)";

constexpr char kS4[] = R"(HloModule s4

ENTRY main {
  p = s4[4]{0} parameter(0)
  ROOT n = s4[4]{0} negate(p)
}
)";

constexpr char kBf16[] = R"(HloModule bf16

ENTRY main {
  p = bf16[2]{0} parameter(0)
  ROOT d = bf16[2]{0} add(p, p)
}
)";

constexpr char kTupleParameter[] = R"(HloModule tuple_parameter

ENTRY main {
  p = (f32[2]{0}, s32[]) parameter(0)
  a = f32[2]{0} get-tuple-element(p), index=0
  ROOT n = f32[2]{0} negate(a)
}
)";

// Shapes do not agree: the verifier must reject it, naming the instruction.
constexpr char kBadShapes[] = R"(HloModule bad

ENTRY main {
  a = f32[2]{0} parameter(0)
  b = f32[2]{0} parameter(1)
  ROOT oops = f32[3]{0} add(a, b)
}
)";

constexpr char kSyntaxError[] = R"(HloModule broken

ENTRY main {
  a = f32[2]{0} parameter(0
  ROOT n = f32[2]{0} negate(a)
}
)";

class XjitCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* xjit = std::getenv("XJIT");
    ASSERT_NE(xjit, nullptr) << "set XJIT to the xjit binary (meson does)";
    xjit_ = xjit;
    char pattern[] = "/tmp/xjit-cli-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::string Write(const std::string& name, const std::string& bytes) const {
    WriteFile(dir_ / name, bytes);
    return Path(name);
  }

  Result Run(std::vector<std::string> args) const {
    Result result;
    std::string out = Path("stdout.txt"), err = Path("stderr.txt");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    args.insert(args.begin(), xjit_);
    // A cross build's emulator (XJIT_WRAPPER, e.g. "qemu-aarch64 -L DIR")
    // runs xjit as it runs this test.
    if (const char* wrapper = std::getenv("XJIT_WRAPPER"); wrapper != nullptr && *wrapper) {
      std::istringstream stream(wrapper);
      std::vector<std::string> words{std::istream_iterator<std::string>(stream),
                                     std::istream_iterator<std::string>()};
      args.insert(args.begin(), words.begin(), words.end());
    }
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      ADD_FAILURE() << "cannot start " << xjit_;
      return result;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status)) {
      result.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      result.signal = WTERMSIG(status);
    }
    result.out = ReadFile(out);
    result.err = ReadFile(err);
    return result;
  }

  // A user error: exit status 1 (not a crash) and one message on stderr.
  void ExpectUserError(const Result& r, const std::string& fragment) const {
    EXPECT_EQ(r.signal, 0) << "crashed; stderr: " << r.err;
    EXPECT_EQ(r.exit_code, 1) << "stderr: " << r.err;
    EXPECT_THAT(r.err, HasSubstr(fragment));
  }

  std::string xjit_;
  fs::path dir_;
};

// ------------------------------------------------------------ commands ---

TEST_F(XjitCli, UsageAndUnknownCommands) {
  Result none = Run({});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.err, HasSubstr("usage:"));
  Result help = Run({"help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("xjit run MODULE.hlo"));
  EXPECT_EQ(Run({"--help"}).exit_code, 0);
  ExpectUserError(Run({"frobnicate"}), "unknown command 'frobnicate'");
}

TEST_F(XjitCli, CheckPrintsCanonicalTextThatIsAFixedPoint) {
  std::string m = Write("add.hlo", kAdd);
  Result first = Run({"check", m});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_THAT(first.out, HasSubstr("HloModule add"));
  EXPECT_THAT(first.out, HasSubstr("ENTRY"));
  EXPECT_THAT(first.out, HasSubstr("add("));
  std::string again = Write("again.hlo", first.out);
  Result second = Run({"check", again});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, first.out);
}

TEST_F(XjitCli, CheckReportsSyntaxErrorsWithPosition) {
  std::string m = Write("broken.hlo", kSyntaxError);
  Result r = Run({"check", m});
  ExpectUserError(r, ": error: ");
  EXPECT_TRUE(std::regex_search(r.err, std::regex("^" + m + ":[0-9]+:[0-9]+: error: "))) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(XjitCli, CheckReportsVerifierErrorsNamingTheInstruction) {
  std::string m = Write("bad.hlo", kBadShapes);
  Result r = Run({"check", m});
  ExpectUserError(r, "oops");
  EXPECT_THAT(r.err, StartsWith(m + ": error: "));
}

TEST_F(XjitCli, CheckErrorsOnFiles) {
  ExpectUserError(Run({"check", Path("missing.hlo")}), "cannot open " + Path("missing.hlo"));
  ExpectUserError(Run({"check", dir_.string()}), "is a directory");
  ExpectUserError(Run({"check"}), "usage: xjit check MODULE.hlo");
  ExpectUserError(Run({"check", Write("a.hlo", kAdd), Write("b.hlo", kAdd)}), "usage");
  // Binary garbage is a parse error, never a crash.
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage.push_back(static_cast<char>((i * 7919) % 251));
  Result r = Run({"check", Write("garbage.hlo", garbage)});
  ExpectUserError(r, "error");
}

// ---------------------------------------------------------------- run ---

TEST_F(XjitCli, RunAddWritesNpy) {
  std::string m = Write("add.hlo", kAdd);
  std::string a = Write("a.npy", Npy("<f4", "(2, 3)", F32({1, 2, 3, 4, 5, 6})));
  std::string b = Write("b.npy", Npy("<f4", "(2, 3)", F32({10, 20, 30, 40, 50, 60.5})));
  Result r = Run({"run", m, a, b, "--backend=interpreter", "--out", Path("out")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("f32[2,3]"));
  EXPECT_THAT(r.out, HasSubstr("66.5"));
  EXPECT_EQ(ReadFile(dir_ / "out" / "0.npy"),
            Npy("<f4", "(2, 3)", F32({11, 22, 33, 44, 55, 66.5})));
  EXPECT_FALSE(fs::exists(dir_ / "out" / "1.npy"));
  // `--backend interpreter` and `--out=DIR` spellings.
  Result r2 = Run({"run", m, a, b, "--backend", "interpreter", "--out=" + Path("out2")});
  ASSERT_EQ(r2.exit_code, 0) << r2.err;
  EXPECT_EQ(r2.out, r.out);
  EXPECT_EQ(ReadFile(dir_ / "out2" / "0.npy"), ReadFile(dir_ / "out" / "0.npy"));
}

TEST_F(XjitCli, TupleResultsAreFlattened) {
  std::string m = Write("pair.hlo", kTuple);
  std::string x = Write("x.npy", Npy("<i4", "(3,)", S32({1, -2, 2147483647})));
  Result r = Run({"run", m, x, "--backend=interpreter", "--out", Path("out")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("("));
  EXPECT_EQ(ReadFile(dir_ / "out" / "0.npy"), Npy("<i4", "(3,)", S32({-1, 2, -2147483647})));
  EXPECT_EQ(ReadFile(dir_ / "out" / "1.npy"), Npy("<f4", "()", F32({2.5})));
}

TEST_F(XjitCli, NpyIsLogicalOrderWhateverTheLayout) {
  std::string m = Write("cm.hlo", kColumnMajor);
  std::string p = Write("p.npy", Npy("<f4", "(2, 3)", F32({1, 2, 3, 4, 5, 6})));
  Result r = Run({"run", m, p, "--backend=interpreter", "--out", Path("out")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(dir_ / "out" / "0.npy"), Npy("<f4", "(2, 3)", F32({-1, -2, -3, -4, -5, -6})));

  Result tiled =
      Run({"run", Write("tiled.hlo", kTiled), p, "--backend=interpreter", "--out", Path("tiled")});
  ASSERT_EQ(tiled.exit_code, 0) << tiled.err;
  EXPECT_EQ(ReadFile(dir_ / "tiled" / "0.npy"),
            Npy("<f4", "(2, 3)", F32({-1, -2, -3, -4, -5, -6})));

  std::string v = Write("v.npy", Npy("|i1", "(3,)", Bytes({1, 0xfe, 7})));
  Result packed = Run(
      {"run", Write("packed.hlo", kPackedS4), v, "--backend=interpreter", "--out", Path("packed")});
  ASSERT_EQ(packed.exit_code, 0) << packed.err;
  EXPECT_EQ(ReadFile(dir_ / "packed" / "0.npy"), Npy("|i1", "(3,)", Bytes({0xff, 2, 0xf9})));
}

TEST_F(XjitCli, RawBitTypes) {
  std::string s4 = Write("s4.hlo", kS4);
  std::string v = Write("v.npy", Npy("|i1", "(4,)", Bytes({1, 0xfe, 7, 0xf9})));  // 1 -2 7 -7
  Result r = Run({"run", s4, v, "--backend=interpreter", "--out", Path("s4out")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(dir_ / "s4out" / "0.npy"), Npy("|i1", "(4,)", Bytes({0xff, 2, 0xf9, 7})));
  ExpectUserError(Run({"run", s4, Write("big.npy", Npy("|i1", "(4,)", Bytes({1, 2, 3, 8}))),
                       "--backend=interpreter"}),
                  "outside the range of s4");

  // bf16 as uint16 bits: 1.0 (0x3f80) and 1.5 (0x3fc0) doubled are 2.0 and 3.0.
  std::string bf16 = Write("bf16.hlo", kBf16);
  std::string w = Write("w.npy", Npy("<u2", "(2,)", Bytes({0x80, 0x3f, 0xc0, 0x3f})));
  Result b = Run({"run", bf16, w, "--backend=interpreter", "--out", Path("bfout")});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(ReadFile(dir_ / "bfout" / "0.npy"),
            Npy("<u2", "(2,)", Bytes({0x00, 0x40, 0x40, 0x40})));
}

TEST_F(XjitCli, TupleParameterTakesOneFilePerArray) {
  std::string m = Write("tp.hlo", kTupleParameter);
  std::string a = Write("a.npy", Npy("<f4", "(2,)", F32({1, -4})));
  std::string i = Write("i.npy", Npy("<i4", "()", S32({5})));
  Result r = Run({"run", m, a, i, "--backend=interpreter", "--out", Path("out")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(dir_ / "out" / "0.npy"), Npy("<f4", "(2,)", F32({-1, 4})));
}

TEST_F(XjitCli, DynamicParameterTakesAnySizeUpToItsBound) {
  std::string m = Write("dyn.hlo", R"(HloModule dyn

ENTRY main {
  p = f32[<=4]{0} parameter(0)
  ROOT n = f32[<=4]{0} negate(p)
}
)");
  Result r = Run({"run", m, Write("three.npy", Npy("<f4", "(3,)", F32({1, 2, 3}))),
                  "--backend=interpreter", "--out", Path("out")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(dir_ / "out" / "0.npy"), Npy("<f4", "(3,)", F32({-1, -2, -3})));
  EXPECT_NE(r.out.find("f32[<=4]{0}(3) {-1, -2, -3}"), std::string::npos) << r.out;
  ExpectUserError(Run({"run", m, Write("five.npy", Npy("<f4", "(5,)", F32({1, 2, 3, 4, 5}))),
                       "--backend=interpreter"}),
                  "expected float32 (<=4,) (for f32[<=4]), found float32 (5,)");
}

TEST_F(XjitCli, ArgumentMismatchesAreClearErrors) {
  std::string m = Write("add.hlo", kAdd);
  std::string a = Write("a.npy", Npy("<f4", "(2, 3)", F32({1, 2, 3, 4, 5, 6})));
  std::string f64 = Write("f64.npy", Npy("<f8", "(2, 3)", std::string(48, '\0')));
  std::string short_shape = Write("s.npy", Npy("<f4", "(3,)", F32({1, 2, 3})));
  ExpectUserError(Run({"run", m, a, f64, "--backend=interpreter"}),
                  "argument 1 (" + f64 +
                      ") for parameter 1: expected float32 (2, 3) (for f32[2,3]), "
                      "found float64 (2, 3)");
  ExpectUserError(Run({"run", m, short_shape, a, "--backend=interpreter"}),
                  "argument 0 (" + short_shape + ") for parameter 0: expected float32 (2, 3)");
  ExpectUserError(Run({"run", m, a, "--backend=interpreter"}), "missing argument 1: parameter 1");
  ExpectUserError(Run({"run", m, a, a, a, "--backend=interpreter"}),
                  "3 .npy arguments given, but the entry computation takes 2 arrays");
  ExpectUserError(Run({"run", m, a, Path("nope.npy"), "--backend=interpreter"}),
                  "argument 1 (" + Path("nope.npy") + ")");
}

TEST_F(XjitCli, MalformedNpyNeverCrashes) {
  std::string m = Write("add.hlo", kAdd);
  std::string good = Npy("<f4", "(2, 3)", F32({1, 2, 3, 4, 5, 6}));
  std::string a = Write("a.npy", good);
  ExpectUserError(
      Run({"run", m, a, Write("t.npy", good.substr(0, good.size() - 3)), "--backend=interpreter"}),
      "truncated .npy data");
  ExpectUserError(Run({"run", m, a, Write("h.npy", good.substr(0, 50)), "--backend=interpreter"}),
                  "truncated .npy header");
  ExpectUserError(Run({"run", m, a, Write("z.npy", "PK\x03\x04"), "--backend=interpreter"}),
                  "not a .npy file");
  ExpectUserError(
      Run({"run", m, a, Write("huge.npy", Npy("<f4", "(4611686018427387904, 4)", F32({1}))),
           "--backend=interpreter"}),
      "truncated .npy data");
  std::string bad_header = good;
  bad_header.replace(10, 9, "{'descr' ");
  ExpectUserError(Run({"run", m, a, Write("b.npy", bad_header), "--backend=interpreter"}),
                  "malformed .npy header");
}

TEST_F(XjitCli, BadFlags) {
  std::string m = Write("add.hlo", kAdd);
  ExpectUserError(Run({"run"}), "xjit run needs a MODULE.hlo");
  ExpectUserError(Run({"run", m, "--backend=gpu"}), "unknown backend 'gpu'");
  ExpectUserError(Run({"run", m, "--repeat", "0"}), "--repeat needs a positive integer");
  ExpectUserError(Run({"run", m, "--threads=x"}), "--threads needs a positive integer");
  ExpectUserError(Run({"run", m, "--out"}), "--out needs a value");
  ExpectUserError(Run({"run", m, "--frobnicate"}), "unknown flag '--frobnicate'");
  ExpectUserError(Run({"run", m, "-o", "x"}), "unknown flag '-o'");
  ExpectUserError(Run({"run", m, "--seed", "3", "--backend=interpreter"}),
                  "--seed only applies with --random-args");
  std::string file = Write("file", "x");
  ExpectUserError(Run({"run", m, "--random-args", "--backend=interpreter", "--out", file}),
                  "exists and is not a directory");
}

// --replicas N on the jit: N threads running the compiled program, the same
// per-replica output as the interpreter's.
TEST_F(XjitCli, JitReplicasEqualTheInterpreter) {
  std::string m = Write("replicas.hlo", R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[3] parameter(0)
  id = u32[] replica-id()
  f = f32[] convert(id)
  b = f32[3] broadcast(f), dimensions={}
  y = f32[3] add(x, b)
  ROOT r = f32[3] all-reduce(y), replica_groups={{0,2},{1,3}}, to_apply=add
})");
  Result jit = Run({"run", m, "--random-args", "--replicas", "4", "--backend=jit"});
  ASSERT_EQ(jit.exit_code, 0) << jit.err;
  Result interpreter = Run({"run", m, "--random-args", "--replicas", "4", "--backend=interpreter"});
  ASSERT_EQ(interpreter.exit_code, 0) << interpreter.err;
  EXPECT_EQ(jit.out, interpreter.out);
  EXPECT_NE(jit.out.find("replica 2:"), std::string::npos) << jit.out;
}

TEST_F(XjitCli, RandomArgsAreSeeded) {
  std::string m = Write("add.hlo", kAdd);
  Result a = Run({"run", m, "--random-args", "--seed", "7", "--backend=interpreter"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  Result b = Run({"run", m, "--random-args", "--seed=7", "--backend=interpreter"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  Result c = Run({"run", m, "--random-args", "--seed", "8", "--backend=interpreter"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
  EXPECT_THAT(a.out, StartsWith("f32[2,3]"));
  // A given file fills the first parameter; the rest are random.
  std::string p = Write("p.npy", Npy("<f4", "(2, 3)", F32({1, 2, 3, 4, 5, 6})));
  Result d = Run({"run", m, p, "--random-args", "--backend=interpreter", "--repeat", "3"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_THAT(d.err, HasSubstr("run ms: "));
}

// The bundled example (examples/, made by examples/make_mlp.py): results
// agree with numpy's float64 answers to float32 accuracy.
std::vector<float> NpyFloats(const std::string& file) {
  if (file.size() < 10) return {};
  size_t header = static_cast<uint8_t>(file[8]) | (static_cast<uint8_t>(file[9]) << 8);
  std::vector<float> out((file.size() - 10 - header) / 4);
  std::memcpy(out.data(), file.data() + 10 + header, out.size() * 4);
  return out;
}

class XjitCliBackends : public XjitCli, public ::testing::WithParamInterface<const char*> {};

TEST_P(XjitCliBackends, BundledExample) {
  const char* examples = std::getenv("XJIT_EXAMPLES");
  ASSERT_NE(examples, nullptr);
  fs::path dir(examples);
  Result r = Run({"run", (dir / "mlp.hlo").string(), (dir / "x.npy").string(),
                  std::string("--backend=") + GetParam(), "--out", Path("out")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int i = 0; i < 2; ++i) {
    std::string got_file = ReadFile(dir_ / "out" / (std::to_string(i) + ".npy"));
    std::string want_file = ReadFile(dir / (i == 0 ? "expected_logits.npy" : "expected_probs.npy"));
    // Same header (dtype, shape), values within float32 rounding.
    ASSERT_EQ(got_file.substr(0, 128), want_file.substr(0, 128));
    std::vector<float> got = NpyFloats(got_file), want = NpyFloats(want_file);
    ASSERT_EQ(got.size(), 12u);
    ASSERT_EQ(want.size(), 12u);
    for (size_t k = 0; k < got.size(); ++k) {
      EXPECT_NEAR(got[k], want[k], 1e-5 + 1e-5 * std::abs(want[k]))
          << "output " << i << " at " << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, XjitCliBackends, ::testing::Values("interpreter", "jit"));

// ---------------------------------------------------------------- jit ---

// A loop fusion (one kernel), a reduce (no kernel yet: an interpreted step),
// and elementwise work before and after it.
constexpr char kFusionAndReduce[] = R"(HloModule mixed

sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

fused {
  a = f32[2,3]{1,0} parameter(0)
  b = f32[2,3]{1,0} parameter(1)
  m = f32[2,3]{1,0} multiply(a, b)
  two = f32[] constant(2)
  t = f32[2,3]{1,0} broadcast(two), dimensions={}
  ROOT s = f32[2,3]{1,0} subtract(m, t)
}

ENTRY main {
  a = f32[2,3]{1,0} parameter(0)
  b = f32[2,3]{1,0} parameter(1)
  f = f32[2,3]{1,0} fusion(a, b), kind=kLoop, calls=fused
  zero = f32[] constant(0)
  r = f32[2]{0} reduce(f, zero), dimensions={1}, to_apply=sum
  ROOT n = f32[2]{0} negate(r)
}
)";

// Data movement and integers: transpose, slice, convert, select.
constexpr char kMovement[] = R"(HloModule movement

ENTRY main {
  x = s32[3]{0} parameter(0)
  m = s32[2,3]{1,0} broadcast(x), dimensions={1}
  t = s32[3,2]{1,0} transpose(m), dimensions={1,0}
  s = s32[2,2]{1,0} slice(t), slice={[1:3], [0:2]}
  zero = s32[] constant(0)
  z = s32[2,2]{1,0} broadcast(zero), dimensions={}
  gt = pred[2,2]{1,0} compare(s, z), direction=GT
  n = s32[2,2]{1,0} negate(s)
  sel = s32[2,2]{1,0} select(gt, s, n)
  ROOT f = f32[2,2]{1,0} convert(sel)
}
)";

TEST_F(XjitCli, JitIsTheDefaultBackend) {
  std::string m = Write("add.hlo", kAdd);
  std::string a = Write("a.npy", Npy("<f4", "(2, 3)", F32({1, 2, 3, 4, 5, 6})));
  std::string b = Write("b.npy", Npy("<f4", "(2, 3)", F32({10, 20, 30, 40, 50, 60.5})));
  Result r = Run({"run", m, a, b, "--out", Path("out")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("f32[2,3]"));
  EXPECT_EQ(ReadFile(dir_ / "out" / "0.npy"),
            Npy("<f4", "(2, 3)", F32({11, 22, 33, 44, 55, 66.5})));
  for (const char* isa : {kBaseIsa, "--isa=auto"}) {
    Result again = Run({"run", m, a, b, "--backend=jit", isa, "--threads", "2", "--repeat", "3",
                        "--out", Path("again")});
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(again.out, r.out) << isa;
    EXPECT_THAT(again.err, HasSubstr("jit backend"));
    EXPECT_EQ(ReadFile(dir_ / "again" / "0.npy"), ReadFile(dir_ / "out" / "0.npy")) << isa;
  }
}

TEST_F(XjitCli, JitMatchesHandComputedValues) {
  // (a*b - 2) summed along rows, negated: rows {1,2,3}*{4,5,6} and
  // {-1,0,1}*{2,2,2}: -(4+10+18-6) = -26 and -(-2+0+2-6) = 6.
  std::string m = Write("mixed.hlo", kFusionAndReduce);
  std::string a = Write("a.npy", Npy("<f4", "(2, 3)", F32({1, 2, 3, -1, 0, 1})));
  std::string b = Write("b.npy", Npy("<f4", "(2, 3)", F32({4, 5, 6, 2, 2, 2})));
  Result r = Run({"run", m, a, b, "--backend=jit", "--out", Path("out")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(dir_ / "out" / "0.npy"), Npy("<f4", "(2,)", F32({-26, 6})));

  // x = {5,-7,9}: rows 1..2 of the transposed broadcast are {-7,-7}, {9,9};
  // their absolute values as f32.
  std::string mv = Write("movement.hlo", kMovement);
  std::string x = Write("x.npy", Npy("<i4", "(3,)", S32({5, -7, 9})));
  Result r2 = Run({"run", mv, x, "--backend=jit", "--out", Path("out2")});
  ASSERT_EQ(r2.exit_code, 0) << r2.err;
  EXPECT_EQ(ReadFile(dir_ / "out2" / "0.npy"), Npy("<f4", "(2, 2)", F32({7, 7, 9, 9})));
}

// The jit's .npy results are byte-for-byte the interpreter's.
TEST_F(XjitCli, JitAgreesWithTheInterpreter) {
  struct Case {
    const char* name;
    const char* hlo;
  };
  const Case cases[] = {
      {"add", kAdd},          {"pair", kTuple},          {"column_major", kColumnMajor},
      {"bf16", kBf16},        {"s4", kS4},               {"tuple_parameter", kTupleParameter},
      {"tiled", kTiled},      {"packed", kPackedS4},     {"mixed", kFusionAndReduce},
      {"movement", kMovement},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string m = Write(std::string(c.name) + ".hlo", c.hlo);
    std::string jit_dir = Path(std::string(c.name) + "_jit");
    std::string int_dir = Path(std::string(c.name) + "_int");
    Result j = Run({"run", m, "--random-args", "--seed", "5", "--backend=jit", "--out", jit_dir});
    ASSERT_EQ(j.exit_code, 0) << j.err;
    Result i =
        Run({"run", m, "--random-args", "--seed", "5", "--backend=interpreter", "--out", int_dir});
    ASSERT_EQ(i.exit_code, 0) << i.err;
    EXPECT_EQ(j.out, i.out);
    int files = 0;
    for (const auto& entry : fs::directory_iterator(int_dir)) {
      ++files;
      EXPECT_EQ(ReadFile(fs::path(jit_dir) / entry.path().filename()), ReadFile(entry.path()))
          << entry.path().filename();
    }
    EXPECT_GT(files, 0);
  }
}

// The summary lines of shared/DESIGN.md, last, in order, with their values.
struct Summary {
  long kernels = -1, interpreted = -1, temp = -1, peak = -1;
  double compile_ms = -1;
};

Summary ParseSummary(const std::string& out) {
  Summary s;
  std::smatch m;
  std::regex tail(
      "kernels: ([0-9]+)\ninterpreted steps: ([0-9]+)\ntemp bytes: ([0-9]+)\n"
      "peak bytes: ([0-9]+)\ncompile ms: ([0-9]+(\\.[0-9]+)?)\n$");
  if (std::regex_search(out, m, tail)) {
    s.kernels = std::stol(m[1]);
    s.interpreted = std::stol(m[2]);
    s.temp = std::stol(m[3]);
    s.peak = std::stol(m[4]);
    s.compile_ms = std::stod(m[5]);
  }
  return s;
}

TEST_F(XjitCli, CompileEndsWithTheSummaryLines) {
  Result add = Run({"compile", Write("add.hlo", kAdd)});
  ASSERT_EQ(add.exit_code, 0) << add.err;
  Summary s = ParseSummary(add.out);
  EXPECT_EQ(s.kernels, 1) << add.out;
  EXPECT_EQ(s.interpreted, 0) << add.out;
  EXPECT_EQ(s.temp, 0) << add.out;   // The sum is written straight into the result.
  EXPECT_GE(s.peak, 24) << add.out;  // At least the f32[2,3] result.
  EXPECT_GE(s.compile_ms, 0) << add.out;
  // The pipeline wraps the add in a fusion; kernels are named after it.
  EXPECT_THAT(add.out, HasSubstr("kernel fusion: "));
  EXPECT_THAT(add.out, Not(HasSubstr("interpreted:")));

  // Every interpreted step and every kernel has its own line, and the counts
  // agree with the summary. Without the pass pipeline the module's three
  // instructions are compiled as written (an instruction without a kernel
  // would be an interpreted step with its reason; the counts move together).
  Result mixed =
      Run({"compile", Write("mixed.hlo", kFusionAndReduce), kBaseIsa, "--passes=off"});
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
  Summary t = ParseSummary(mixed.out);
  EXPECT_GE(t.kernels, 2) << mixed.out;  // At least the fusion and the negate.
  EXPECT_EQ(t.kernels + t.interpreted, 3) << mixed.out;
  EXPECT_GT(t.temp, 0) << mixed.out;
  auto count = [&](const std::string& pattern) {  // Whole lines matching.
    std::regex re(pattern);
    std::istringstream lines(mixed.out);
    long n = 0;
    for (std::string line; std::getline(lines, line);) n += std::regex_match(line, re) ? 1 : 0;
    return n;
  };
  EXPECT_EQ(count("interpreted: [^ ]+ \\([a-z-]+\\): .+"), t.interpreted) << mixed.out;
  EXPECT_EQ(count("kernel [^ ]+: [0-9]+ bytes of code, [0-9]+ lanes?"), t.kernels) << mixed.out;
  if (t.interpreted == 1) {
    EXPECT_THAT(mixed.out, HasSubstr("\ninterpreted: r (reduce): "));
  }
  EXPECT_THAT(mixed.out, HasSubstr(kBaseTarget));
}

TEST_F(XjitCli, CompileAsmPrintsInstructions) {
  std::string m = Write("add.hlo", kAdd);
  Result plain = Run({"compile", m, kBaseIsa});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  Result with_asm = Run({"compile", m, "--asm", kBaseIsa});
  ASSERT_EQ(with_asm.exit_code, 0) << with_asm.err;
  EXPECT_THAT(with_asm.out, HasSubstr("--- asm of fusion"));
  // f32 addition (SSE or NEON form), and the kernel's return.
  EXPECT_TRUE(std::regex_search(with_asm.out, std::regex(kAddF32))) << with_asm.out;
  EXPECT_TRUE(std::regex_search(with_asm.out, std::regex("\\bret\\b"))) << with_asm.out;
  EXPECT_FALSE(std::regex_search(plain.out, std::regex("\\bret\\b"))) << plain.out;
  EXPECT_EQ(ParseSummary(with_asm.out).kernels, 1);
}

TEST_F(XjitCli, CompileDumpWritesPassesAndKernels) {
  std::string m = Write("mixed.hlo", kFusionAndReduce);
  Result r = Run({"compile", m, "--dump", Path("dump")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "dump" / "00-input.hlo")) << r.err;
  int hlo = 0, kernels = 0;
  for (const auto& entry : fs::directory_iterator(dir_ / "dump")) {
    std::string name = entry.path().filename().string();
    if (name.size() > 4 && name.substr(name.size() - 4) == ".hlo") ++hlo;
    if (name.find(".kernel.txt") != std::string::npos) ++kernels;
  }
  EXPECT_GT(hlo, 1);  // The input and at least one pass.
  EXPECT_EQ(kernels, ParseSummary(r.out).kernels);
  EXPECT_GE(kernels, 2);
  EXPECT_THAT(ReadFile(dir_ / "dump" / "00-input.hlo"), HasSubstr("HloModule mixed"));
}

TEST_F(XjitCli, BenchPrintsCompileAndRunTimes) {
  std::string m = Write("add.hlo", kAdd);
  std::string a = Write("a.npy", Npy("<f4", "(2, 3)", F32({1, 2, 3, 4, 5, 6})));
  std::regex compile_ms("(^|\n)compile ms: [0-9]+(\\.[0-9]+)?\n");
  std::regex run_ms("(^|\n)run ms: [0-9]+(\\.[0-9]+)?\n");
  for (std::vector<std::string> extra :
       {std::vector<std::string>{}, {a, "--iterations", "3", "--threads=2", kBaseIsa},
        {"--backend=interpreter", "--iterations=2", "--seed", "4"},
        {"--iterations=1", "--warmup-ms", "0"}}) {
    std::vector<std::string> args = {"bench", m};
    args.insert(args.end(), extra.begin(), extra.end());
    Result r = Run(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(std::regex_search(r.out, compile_ms)) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, run_ms)) << r.out;
  }
}

// --warmup-ms runs the program untimed, and --min-time-ms goes on timing
// past --iterations, until that much time has passed, so the command cannot
// finish sooner, on either backend; with --min-time-ms the count it prints
// is the runs it timed.
TEST_F(XjitCli, BenchTakesTheTimeAsked) {
  std::string m = Write("add.hlo", kAdd);
  const std::regex iterations(R"(iterations: (\d+))");
  for (const char* backend : {"--backend=jit", "--backend=interpreter"}) {
    for (const char* flag : {"--warmup-ms=300", "--min-time-ms=200"}) {
      SCOPED_TRACE(std::string(backend) + " " + flag);
      const bool timed = std::string(flag).starts_with("--min-time-ms");
      auto start = std::chrono::steady_clock::now();
      Result r = Run({"bench", m, backend, "--iterations=2", flag});
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      ASSERT_EQ(r.exit_code, 0) << r.err;
      EXPECT_GE(seconds, timed ? 0.2 : 0.3);
      std::smatch count;
      if (timed && std::string(backend) == "--backend=jit") {
        ASSERT_TRUE(std::regex_search(r.out, count, iterations)) << r.out;
        EXPECT_GT(std::stoll(count[1]), 2) << r.out;  // An add takes microseconds.
      }
    }
  }
}

TEST_F(XjitCli, JitCommandErrors) {
  std::string m = Write("add.hlo", kAdd);
  std::string a = Write("a.npy", Npy("<f4", "(2, 3)", F32({1, 2, 3, 4, 5, 6})));
  std::string broken = Write("broken.hlo", kSyntaxError);
  for (const char* command : {"compile", "bench"}) {
    SCOPED_TRACE(command);
    ExpectUserError(Run({command}), std::string("xjit ") + command + " needs a MODULE.hlo");
    ExpectUserError(Run({command, Path("missing.hlo")}), "cannot open");
    Result syntax = Run({command, broken});
    ExpectUserError(syntax, ": error: ");
    EXPECT_TRUE(std::regex_search(syntax.err, std::regex("^" + broken + ":[0-9]+:[0-9]+: ")))
        << syntax.err;
    ExpectUserError(Run({command, m, "--isa=avx1024"}), "unknown --isa 'avx1024'");
    // An instruction set of the other architecture: a clear error.
    ExpectUserError(Run({command, m, kForeignIsa}), "does not support");
    ExpectUserError(Run({command, m, "--out", "x"}), "unknown flag '--out' for xjit " +
                                                         std::string(command));
    ExpectUserError(Run({command, m, "--threads=0"}), "--threads needs a positive integer");
  }
  ExpectUserError(Run({"compile", m, a}), "xjit compile takes one MODULE.hlo");
  ExpectUserError(Run({"compile", m, "--asm=yes"}), "--asm takes no value");
  ExpectUserError(Run({"compile", m, "--dump"}), "--dump needs a value");
  ExpectUserError(Run({"bench", m, "--iterations", "-1"}), "--iterations needs a positive integer");
  ExpectUserError(Run({"bench", m, "--warmup-ms", "-1"}), "--warmup-ms needs an integer from 0");
  ExpectUserError(Run({"bench", m, "--warmup-ms=soon"}), "--warmup-ms needs an integer from 0");
  ExpectUserError(Run({"bench", m, "--min-time-ms=-5"}), "--min-time-ms needs an integer from 0");
  ExpectUserError(Run({"bench", m, a, a, a}), "3 .npy arguments given");
  ExpectUserError(Run({"run", m, a, "--isa", "mmx"}), "unknown --isa 'mmx'");
  // Argument mismatches on the jit backend are the same clear errors.
  ExpectUserError(Run({"run", m, a, Write("s.npy", Npy("<f4", "(3,)", F32({1, 2, 3})))}),
                  "argument 1 (" + Path("s.npy") + ") for parameter 1: expected float32 (2, 3)");
  ExpectUserError(Run({"run", m, a}), "missing argument 1: parameter 1");
}

}  // namespace
