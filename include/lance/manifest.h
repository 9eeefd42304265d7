// The manifest: everything one version of a dataset is.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lance/fragment.h"
#include "lance/schema.h"

namespace lance {

struct WriterVersion {
  std::string library;
  std::string version;
  std::optional<std::string> prerelease;
  std::optional<std::string> build_metadata;
};

struct BasePath {
  uint32_t id = 0;
  std::optional<std::string> name;
  bool is_dataset_root = false;
  std::string path;
};

struct Manifest {
  Schema schema;
  std::vector<Fragment> fragments;
  uint64_t version = 0;
  std::optional<WriterVersion> writer_version;
  std::optional<uint64_t> index_section;        // file offset of the IndexSection
  std::optional<int64_t> timestamp_nanos;       // since the Unix epoch, UTC
  std::string tag;
  uint64_t reader_feature_flags = 0;
  uint64_t writer_feature_flags = 0;
  std::optional<uint32_t> max_fragment_id;
  std::string transaction_file;                 // relative to _transactions/
  std::optional<uint64_t> transaction_section;  // file offset of the inline Transaction
  uint64_t next_row_id = 0;
  std::string data_file_format = "lance";
  std::string data_storage_version;             // as stored; "" if absent
  std::map<std::string, std::string> config;
  std::map<std::string, std::string> table_metadata;
  std::vector<BasePath> base_paths;
  std::optional<std::string> branch;

  /// Whether fragments carry stable row ids.
  bool UsesStableRowIds() const;
};

}  // namespace lance
