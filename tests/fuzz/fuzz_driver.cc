// A stand-in for libFuzzer's driver, for compilers without -fsanitize=fuzzer
// (Debian's g++): runs every seed input, then deterministic mutations of
// them (bit flips, byte overwrites, truncations, insertions, splices) until
// the time or iteration budget is spent. With clang the targets link
// against libFuzzer instead and this file is not used.
//
//   <target> [--seconds N] [--iterations N] [--seed S] SEED_FILE_OR_DIR...
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Run(const std::string& input) {
  // A private copy so reads past the end are caught by ASan.
  std::vector<uint8_t> copy(input.begin(), input.end());
  LLVMFuzzerTestOneInput(copy.data(), copy.size());
}

std::string Mutate(const std::vector<std::string>& seeds, std::mt19937_64& rng) {
  std::string s = seeds[rng() % seeds.size()];
  const int rounds = 1 + static_cast<int>(rng() % 4);
  for (int r = 0; r < rounds; ++r) {
    switch (rng() % 6) {
      case 0:  // flip a bit
        if (!s.empty()) s[rng() % s.size()] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1:  // overwrite a byte with an interesting value
        if (!s.empty()) {
          static const uint8_t kValues[] = {0, 1, 0x7f, 0x80, 0xff, 0xfe, 0x40, 0x10};
          s[rng() % s.size()] = static_cast<char>(kValues[rng() % sizeof kValues]);
        }
        break;
      case 2:  // truncate
        if (!s.empty()) s.resize(rng() % s.size());
        break;
      case 3:  // insert bytes
        s.insert(s.size() ? rng() % s.size() : 0, std::string(1 + rng() % 8, static_cast<char>(rng())));
        break;
      case 4:  // overwrite 8 bytes with a large little-endian number
        if (s.size() >= 8) {
          uint64_t v = rng() % 2 ? ~uint64_t{0} >> (rng() % 64) : rng();
          std::memcpy(s.data() + rng() % (s.size() - 7), &v, 8);
        }
        break;
      case 5: {  // splice with another seed
        const std::string& other = seeds[rng() % seeds.size()];
        if (!s.empty() && !other.empty()) {
          size_t cut = rng() % s.size();
          s = s.substr(0, cut) + other.substr(rng() % other.size());
        }
        break;
      }
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 10;
  uint64_t iterations = UINT64_MAX, seed = 1;
  std::vector<std::string> seeds;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::stod(argv[++i]);
    } else if (arg == "--iterations" && i + 1 < argc) {
      iterations = std::stoull(argv[++i]);
    } else if (arg == "--seed" && i + 1 < argc) {
      seed = std::stoull(argv[++i]);
    } else if (std::filesystem::is_directory(arg)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(arg)) {
        if (e.is_regular_file() && e.file_size() < (4u << 20)) seeds.push_back(ReadFile(e.path()));
      }
    } else if (std::filesystem::is_regular_file(arg)) {
      seeds.push_back(ReadFile(arg));
    }
  }
  if (seeds.empty()) seeds.push_back(std::string());
  for (const auto& s : seeds) Run(s);
  std::mt19937_64 rng(seed);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  uint64_t n = 0;
  while (n < iterations && std::chrono::steady_clock::now() < deadline) {
    Run(Mutate(seeds, rng));
    ++n;
  }
  std::printf("fuzz: %zu seeds, %llu mutated inputs, no crash\n", seeds.size(), static_cast<unsigned long long>(n));
  return 0;
}
