// The deterministic fuzz driver: a main() that mutates seed inputs with a
// fixed-seed generator and feeds them to the target (fuzz_target.h), for a
// number of runs or seconds. Same flags, same inputs, same order on every
// machine, so a failure found in CI reproduces with the same command.
//
//   FUZZER [--seconds S | --cpu-seconds S | --runs N] [--seed K] [--seeds DIR]... [--ext .hlo]
//          [--max-len BYTES] [--timeout S] [--crash-dir DIR] [FILE...]
// FILE arguments are run once each, unmutated (to reproduce a crash).
//
// On a crash (a signal), or when one input runs longer than --timeout, the
// input is written to CRASH_DIR/crash-<seed>-<run> before the process dies,
// and the message names that file. The summary line at the end reads
// "fuzz: N runs in S s, C CPU s (K kept, C seeds)". --cpu-seconds bounds the
// process's CPU time instead of wall time: on a shared machine that is what
// "fuzzed for 10 CPU-minutes" means.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"

namespace xjit::fuzz {
namespace {

// splitmix64: the same sequence everywhere.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(Next() % n); }

 private:
  uint64_t state_;
};

// The input being run, for the crash handlers (plain globals: a signal
// handler may only read them).
const uint8_t* g_current = nullptr;
size_t g_current_size = 0;
char g_crash_path[4096] = "";
bool g_keep = false;

void WriteCrashAndDie(int signal) {
  if (g_crash_path[0] != '\0' && g_current != nullptr) {
    const int fd = open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      size_t done = 0;
      while (done < g_current_size) {
        const ssize_t n = write(fd, g_current + done, g_current_size - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
      }
      close(fd);
    }
    const char* what = signal == SIGALRM ? "fuzz: input timed out; written to "
                                         : "fuzz: input crashed; written to ";
    (void)!write(2, what, std::strlen(what));
    (void)!write(2, g_crash_path, std::strlen(g_crash_path));
    (void)!write(2, "\n", 1);
  }
  ::signal(signal == SIGALRM ? SIGABRT : signal, SIG_DFL);
  raise(signal == SIGALRM ? SIGABRT : signal);
}

void InstallHandlers() {
  struct sigaction action = {};
  action.sa_handler = &WriteCrashAndDie;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;
  for (int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM}) {
    sigaction(signal, &action, nullptr);
  }
}

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Numbers that stress size arithmetic, as text and as they appear in .npy
// headers; the target's dictionary adds its own syntax.
const char* const kNumbers[] = {"0",
                                "1",
                                "-1",
                                "2",
                                "255",
                                "65536",
                                "2147483647",
                                "2147483648",
                                "-2147483648",
                                "4294967296",
                                "4611686018427387904",
                                "9223372036854775807",
                                "-9223372036854775808",
                                "9223372036854775808",
                                "3000000000",
                                "1099511627776"};

class Mutator {
 public:
  Mutator(Random* random, std::vector<std::string> dictionary, size_t max_len)
      : random_(*random), dictionary_(std::move(dictionary)), max_len_(max_len) {}

  void Mutate(std::string* s, const std::vector<std::string>& corpus) {
    const int rounds = 1 + static_cast<int>(random_.Below(4));
    for (int r = 0; r < rounds; ++r) MutateOnce(s, corpus);
    if (s->size() > max_len_) s->resize(max_len_);
  }

 private:
  void MutateOnce(std::string* s, const std::vector<std::string>& corpus) {
    const size_t n = s->size();
    switch (random_.Below(9)) {
      case 0:  // Flip a bit.
        if (n > 0) (*s)[random_.Below(n)] ^= static_cast<char>(1 << random_.Below(8));
        break;
      case 1:  // Set a byte.
        if (n > 0) (*s)[random_.Below(n)] = static_cast<char>(random_.Next());
        break;
      case 2: {  // Delete a range.
        if (n == 0) break;
        const size_t at = random_.Below(n);
        s->erase(at, 1 + random_.Below(std::min<size_t>(n - at, 16)));
        break;
      }
      case 3: {  // Duplicate a range elsewhere.
        if (n == 0) break;
        const size_t from = random_.Below(n);
        const size_t len = 1 + random_.Below(std::min<size_t>(n - from, 64));
        const std::string chunk = s->substr(from, len);
        s->insert(random_.Below(n + 1), chunk);
        break;
      }
      case 4:
      case 5: {  // Insert or overwrite with a dictionary token.
        const std::string& token = dictionary_.empty()
                                       ? std::string(kNumbers[random_.Below(std::size(kNumbers))])
                                       : dictionary_[random_.Below(dictionary_.size())];
        const size_t at = random_.Below(n + 1);
        if (random_.Below(2) == 0 || at == n) {
          s->insert(at, token);
        } else {
          s->replace(at, std::min(token.size(), n - at), token);
        }
        break;
      }
      case 6:
      case 7: {  // Replace a decimal number with an edge value.
        std::vector<size_t> starts;
        for (size_t i = 0; i < n; ++i) {
          if (std::isdigit(static_cast<unsigned char>((*s)[i])) &&
              (i == 0 || !std::isdigit(static_cast<unsigned char>((*s)[i - 1])))) {
            starts.push_back(i);
          }
        }
        if (starts.empty()) break;
        const size_t at = starts[random_.Below(starts.size())];
        size_t end = at;
        while (end < n && std::isdigit(static_cast<unsigned char>((*s)[end]))) ++end;
        s->replace(at, end - at, kNumbers[random_.Below(std::size(kNumbers))]);
        break;
      }
      case 8: {  // Splice with another input.
        if (corpus.empty() || n == 0) break;
        const std::string& other = corpus[random_.Below(corpus.size())];
        if (other.empty()) break;
        const size_t cut = random_.Below(n);
        const size_t from = random_.Below(other.size());
        *s = s->substr(0, cut) + other.substr(from, random_.Below(other.size() - from + 1));
        break;
      }
    }
  }

  Random& random_;
  std::vector<std::string> dictionary_;
  size_t max_len_;
};

// CPU seconds this process has used, all threads together.
double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

int RunOne(const std::string& input) {
  g_current = reinterpret_cast<const uint8_t*>(input.data());
  g_current_size = input.size();
  g_keep = false;
  return LLVMFuzzerTestOneInput(g_current, g_current_size);
}

int Main(int argc, char** argv) {
  double seconds = 10;
  double cpu_seconds = -1;  // when >= 0, bounds CPU time instead of wall time
  int64_t runs = -1;
  uint64_t seed = 1;
  int timeout = 20;
  size_t max_len = 1 << 16;
  std::string ext;
  std::string crash_dir = ".";
  std::vector<std::string> seed_dirs, files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "fuzz: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--seconds")
      seconds = std::atof(value().c_str());
    else if (arg == "--cpu-seconds")
      cpu_seconds = std::atof(value().c_str());
    else if (arg == "--runs")
      runs = std::atoll(value().c_str());
    else if (arg == "--seed")
      seed = std::strtoull(value().c_str(), nullptr, 10);
    else if (arg == "--seeds")
      seed_dirs.push_back(value());
    else if (arg == "--ext")
      ext = value();
    else if (arg == "--timeout")
      timeout = std::atoi(value().c_str());
    else if (arg == "--max-len")
      max_len = std::strtoull(value().c_str(), nullptr, 10);
    else if (arg == "--crash-dir")
      crash_dir = value();
    else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "fuzz: unknown flag %s\n", arg.c_str());
      return 2;
    } else {
      files.push_back(arg);
    }
  }
  InstallHandlers();
  if (!files.empty()) {  // Reproduce: each file once, as is.
    for (const std::string& file : files) {
      std::snprintf(g_crash_path, sizeof(g_crash_path), "%s", "");
      const std::string input = ReadAll(file);
      alarm(static_cast<unsigned>(timeout));
      RunOne(input);
      alarm(0);
      std::printf("fuzz: %s ran without a crash\n", file.c_str());
    }
    return 0;
  }
  std::vector<std::string> corpus = XjitFuzzSeeds();
  for (const std::string& dir : seed_dirs) {
    std::error_code ec;
    std::vector<std::filesystem::path> paths;
    for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file() && (ext.empty() || it->path().extension() == ext)) {
        paths.push_back(it->path());
      }
    }
    std::sort(paths.begin(), paths.end());  // Directory order is not deterministic.
    for (const auto& path : paths) {
      std::string input = ReadAll(path);
      if (input.size() <= max_len) corpus.push_back(std::move(input));
    }
  }
  const size_t seeds = corpus.size();
  if (corpus.empty()) corpus.push_back("");
  Random random(seed);
  Mutator mutator(&random, XjitFuzzDictionary(), max_len);
  constexpr size_t kMaxCorpus = 20000;
  const auto start = std::chrono::steady_clock::now();
  int64_t done = 0, kept = 0;
  // Every seed once as is, then mutations.
  for (;; ++done) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (runs >= 0 ? done >= runs
                  : cpu_seconds >= 0 ? CpuSeconds() >= cpu_seconds : elapsed >= seconds) {
      break;
    }
    std::string input = static_cast<size_t>(done) < seeds ? corpus[static_cast<size_t>(done)]
                                                          : corpus[random.Below(corpus.size())];
    if (static_cast<size_t>(done) >= seeds) mutator.Mutate(&input, corpus);
    std::snprintf(g_crash_path, sizeof(g_crash_path), "%s/crash-%llu-%lld", crash_dir.c_str(),
                  static_cast<unsigned long long>(seed), static_cast<long long>(done));
    alarm(static_cast<unsigned>(timeout));
    RunOne(input);
    alarm(0);
    if (g_keep && static_cast<size_t>(done) >= seeds) {
      ++kept;
      if (corpus.size() < kMaxCorpus) {
        corpus.push_back(std::move(input));
      } else {
        corpus[seeds + random.Below(kMaxCorpus - seeds)] = std::move(input);
      }
    }
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("fuzz: %lld runs in %.1f s, %.1f CPU s (%lld kept, %zu seeds)\n",
              static_cast<long long>(done), elapsed, CpuSeconds(), static_cast<long long>(kept),
              seeds);
  return 0;
}

}  // namespace

void XjitFuzzKeep() { g_keep = true; }

}  // namespace xjit::fuzz

int main(int argc, char** argv) { return xjit::fuzz::Main(argc, argv); }
