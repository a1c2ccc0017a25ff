// jitdump writer (see jitdump.h). The record layouts are those of perf's
// tools/perf/Documentation/jitdump-specification.txt, version 1.
#include "jit/code/jitdump.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace xjit::jit {
namespace {

constexpr uint32_t kMagic = 0x4A695444;  // "JiTD" read as a little-endian u32.
constexpr uint32_t kVersion = 1;
constexpr uint32_t kCodeLoad = 0;
constexpr uint32_t kCodeDebugInfo = 2;

struct FileHeader {
  uint32_t magic;
  uint32_t version;
  uint32_t total_size;
  uint32_t elf_mach;
  uint32_t pad1;
  uint32_t pid;
  uint64_t timestamp;
  uint64_t flags;
};

struct RecordHeader {
  uint32_t id;
  uint32_t total_size;
  uint64_t timestamp;
};

struct CodeLoad {
  RecordHeader header;
  uint32_t pid;
  uint32_t tid;
  uint64_t vma;
  uint64_t code_addr;
  uint64_t code_size;
  uint64_t code_index;
  // Then the NUL-terminated name and the code bytes.
};

struct DebugInfo {
  RecordHeader header;
  uint64_t code_addr;
  uint64_t nr_entry;
  // Then nr_entry entries: u64 addr, i32 line, i32 discriminator, the
  // NUL-terminated file name.
};

uint64_t Timestamp() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

std::string Directory() {
  const char* dir = std::getenv("XJIT_JITDUMP_DIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

uint32_t ElfMachine() {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#else
  return EM_NONE;
#endif
}

// The process's dump file, opened on first use. perf needs the marker
// mapping to exist while it records, so it is never unmapped.
class DumpFile {
 public:
  static DumpFile& Get() {
    static DumpFile* file = new DumpFile();
    return *file;
  }

  void Write(const void* code, int64_t size, absl::string_view name,
             absl::string_view source_text, std::vector<CodeLine> lines) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!Open()) return;
    std::string source_name = absl::StrReplaceAll(name, {{":", "."}, {"/", "."}});
    const std::string source_path = absl::StrCat(source_dir_, "/", source_name, ".txt");
    if (std::FILE* source = std::fopen(source_path.c_str(), "w")) {
      std::fwrite(source_text.data(), 1, source_text.size(), source);
      std::fclose(source);
    }
    const uint64_t address = reinterpret_cast<uintptr_t>(code);

    // Debug info first: perf inject attaches it to the next code load.
    // One entry per distinct offset (the last line wins: ops that emit no
    // code share the offset of the one that does), offsets increasing.
    std::stable_sort(lines.begin(), lines.end(),
                     [](const CodeLine& a, const CodeLine& b) { return a.offset < b.offset; });
    std::vector<CodeLine> entries;
    for (const CodeLine& line : lines) {
      if (line.offset < 0 || line.offset >= size) continue;
      if (!entries.empty() && entries.back().offset == line.offset) {
        entries.back() = line;
      } else {
        entries.push_back(line);
      }
    }
    if (!entries.empty()) {
      std::string record(sizeof(DebugInfo), '\0');
      for (const CodeLine& entry : entries) {
        const uint64_t entry_address = address + static_cast<uint64_t>(entry.offset);
        const int32_t line = entry.line, discriminator = 0;
        record.append(reinterpret_cast<const char*>(&entry_address), sizeof(entry_address));
        record.append(reinterpret_cast<const char*>(&line), sizeof(line));
        record.append(reinterpret_cast<const char*>(&discriminator), sizeof(discriminator));
        record.append(source_path);
        record.push_back('\0');
      }
      DebugInfo info;
      info.header = {kCodeDebugInfo, static_cast<uint32_t>(record.size()), Timestamp()};
      info.code_addr = address;
      info.nr_entry = entries.size();
      std::memcpy(record.data(), &info, sizeof(info));
      Append(record);
    }

    std::string record(sizeof(CodeLoad), '\0');
    record.append(name.data(), name.size());
    record.push_back('\0');
    record.append(static_cast<const char*>(code), static_cast<size_t>(size));
    CodeLoad load;
    load.header = {kCodeLoad, static_cast<uint32_t>(record.size()), Timestamp()};
    load.pid = static_cast<uint32_t>(getpid());
    load.tid = static_cast<uint32_t>(syscall(SYS_gettid));
    load.vma = address;
    load.code_addr = address;
    load.code_size = static_cast<uint64_t>(size);
    load.code_index = next_index_++;
    std::memcpy(record.data(), &load, sizeof(load));
    Append(record);
  }

  std::string path() {
    std::lock_guard<std::mutex> lock(mutex_);
    return path_;
  }

 private:
  bool Open() {
    if (fd_ >= 0) return true;
    if (failed_) return false;
    failed_ = true;  // Unless everything below works.
    const std::string dir = Directory();
    const int pid = static_cast<int>(getpid());
    path_ = absl::StrCat(dir, "/jit-", pid, ".dump");
    source_dir_ = absl::StrCat(dir, "/xjit-", pid);
    mkdir(source_dir_.c_str(), 0755);
    const int fd = open(path_.c_str(), O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    FileHeader header = {};
    header.magic = kMagic;
    header.version = kVersion;
    header.total_size = sizeof(FileHeader);
    header.elf_mach = ElfMachine();
    header.pid = static_cast<uint32_t>(pid);
    header.timestamp = Timestamp();
    // The marker: an executable mapping of the file, which perf record logs
    // (with the file's name) and perf inject --jit looks for.
    const long page = sysconf(_SC_PAGESIZE);
    if (write(fd, &header, sizeof(header)) != static_cast<ssize_t>(sizeof(header)) ||
        mmap(nullptr, static_cast<size_t>(page), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) ==
            MAP_FAILED) {
      close(fd);
      return false;
    }
    fd_ = fd;
    failed_ = false;
    return true;
  }

  void Append(const std::string& record) {
    size_t done = 0;
    while (done < record.size()) {
      const ssize_t n = write(fd_, record.data() + done, record.size() - done);
      if (n <= 0) return;
      done += static_cast<size_t>(n);
    }
  }

  std::mutex mutex_;
  int fd_ = -1;
  bool failed_ = false;
  uint64_t next_index_ = 0;
  std::string path_;
  std::string source_dir_;
};

}  // namespace

bool JitDumpRequestedByEnvironment() {
  const char* value = std::getenv("XJIT_JITDUMP");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

void WriteJitDumpEntry(const void* code, int64_t size, absl::string_view name,
                       absl::string_view source_text, std::vector<CodeLine> lines) {
  DumpFile::Get().Write(code, size, name, source_text, std::move(lines));
}

std::string JitDumpPath() { return DumpFile::Get().path(); }

}  // namespace xjit::jit
