// Fuzz target: scalar index files (BTREE page lookup and data, BITMAP,
// ZONEMAP, LABEL_LIST, NGRAM postings) read through the index readers a
// filtered scan uses, and the byte-level decoders of index contents (FST,
// bloom filter, roaring treemaps, posting lists and impacts).
//
// Input: one byte choosing the index file, then that file's new bytes. The
// file replaces its pylance-written original in a copy of a fixture dataset
// (tests/fixtures/scalar_index), and filters the index answers run on it.
// Seeds: tests/fuzz/seeds/index, each a pylance-written file behind its byte.
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "lance/dataset.h"
#include "lance/index/bloom_filter.h"
#include "lance/index/fst.h"
#include "lance/index/posting_codec.h"
#include "lance/index/scalar_index.h"
#include "lance/scanner.h"

namespace {

namespace fs = std::filesystem;

struct Slot {
  const char* dataset;  // under tests/fixtures/scalar_index
  const char* file;     // under the dataset root
  std::vector<const char*> filters;
};

const std::array<Slot, 6> kSlots = {{
    {"indexed.lance", "_indices/1bc9fa98-6624-4ce8-af7d-2fab63e94959/zonemap.lance", {"x > 2", "x = 1", "x IS NULL"}},
    {"indexed.lance", "_indices/8a5fb012-2cee-4040-b5f5-b2577aa188bb/bitmap_page_lookup.lance",
     {"s = 'b'", "s IN ('a', 'c')", "s IS NULL"}},
    {"indexed.lance", "_indices/e07d53b3-26a1-46e1-8c9b-34979fba74be/page_lookup.lance", {"i = 3", "i > 4", "i < 2"}},
    {"indexed.lance", "_indices/e07d53b3-26a1-46e1-8c9b-34979fba74be/page_data.lance", {"i = 3", "i >= 1"}},
    {"label_list.lance", "_indices/2f47e37c-c65d-44d7-a940-511dc2f73376/bitmap_page_lookup.lance",
     {"array_has_any(tags, ['a'])", "array_has_all(tags, ['a', 'b'])"}},
    {"ngram.lance", "_indices/0bef18b2-0e8c-4f19-aed4-9dc791177e64/ngram_postings.lance",
     {"contains(s, 'abc')", "contains(s, 'x')"}},
}};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteFile(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A private copy of the fixtures; each run renames its dataset so that no
// index a cache keeps (keyed by the dataset's location) answers for it.
struct Workspace {
  fs::path root;
  uint64_t run = 0;
  Workspace() {
    root = fs::temp_directory_path() / ("lance_index_fuzz_" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root);
    for (const char* name : {"indexed.lance", "label_list.lance", "ngram.lance"}) {
      fs::copy(fs::path(LANCE_TEST_FIXTURES_DIR) / "scalar_index" / name, root / name,
               fs::copy_options::recursive);
    }
  }
  ~Workspace() { fs::remove_all(root); }
};

void Decoders(std::string_view bytes) {
  auto fst = lance::index::FstMap::Open(std::string(bytes), "fuzz.fst");
  if (fst.ok()) {
    (void)fst->Get("abc");
    uint64_t n = 0;
    (void)fst->ForEach([&](std::string_view, uint64_t) {
      return ++n > 10000 ? lance::Status::Cancelled("enough") : lance::Status::OK();
    });
  }
  auto bloom = lance::index::SplitBlockBloomFilter::FromBytes(bytes, "fuzz.bloom");
  (void)lance::index::DecodeRoaringTreemap(bytes, "fuzz.treemap");
  (void)lance::index::DecodeRowIdTreeMap(bytes, "fuzz.rowids");
  // A posting list of up to 4 blocks: the first byte says how many
  // postings, the rest is split into the blocks.
  if (!bytes.empty()) {
    const uint32_t length = static_cast<uint8_t>(bytes[0]) * 2u;
    const std::string_view rest = bytes.substr(1);
    const size_t num_blocks = (length + lance::index::kPostingBlockSize - 1) / lance::index::kPostingBlockSize;
    std::vector<std::string_view> blocks;
    for (size_t b = 0; b < num_blocks; ++b) {
      const size_t begin = rest.size() * b / num_blocks;
      const size_t end = rest.size() * (b + 1) / num_blocks;
      blocks.push_back(rest.substr(begin, end - begin));
    }
    auto list = lance::index::DecodePostingList(blocks, length, "fuzz.posting");
    if (list.ok()) {
      std::vector<uint32_t> offsets(num_blocks);
      for (size_t b = 0; b < num_blocks; ++b) offsets[b] = static_cast<uint32_t>(rest.size() * b / num_blocks);
      (void)lance::index::DecodePositions(rest, offsets, &*list, "fuzz.positions");
    }
    (void)lance::index::DecodeImpacts(blocks, length, "fuzz.impacts");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Workspace workspace;
  if (size == 0) return 0;
  const Slot& slot = kSlots[data[0] % kSlots.size()];
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  Decoders(bytes);

  // The dataset under a name never used before (see Workspace).
  const fs::path current = workspace.root / slot.dataset;
  const fs::path renamed = workspace.root / (std::to_string(++workspace.run) + "_" + slot.dataset);
  fs::rename(current, renamed);
  const fs::path file = renamed / slot.file;
  const std::string original = ReadFile(file);
  WriteFile(file, bytes);
  auto dataset = lance::Dataset::Open(renamed.string());
  if (dataset.ok()) {
    for (const auto& metadata : (*dataset)->indices()) (void)lance::index::OpenScalarIndex(**dataset, metadata);
    for (const char* filter : slot.filters) {
      lance::ScanBuilder scan(*dataset);
      scan.Filter(filter);
      (void)scan.ToTable();
      (void)scan.CountRows();
    }
  }
  WriteFile(file, original);
  fs::rename(renamed, current);
  return 0;
}
