#include "lance/file/blob_v2.h"

#include <cstdlib>

namespace lance::file {
namespace {

constexpr const char* kExtensionNameKey = "ARROW:extension:name";
constexpr const char* kBlobKey = "lance-encoding:blob";
constexpr const char* kPackedKey = "lance-encoding:packed";

Field DescriptorChild(const char* name, const char* logical_type, int32_t encoding) {
  Field f;
  f.name = name;
  f.logical_type = logical_type;
  f.nullable = false;
  f.encoding = encoding;
  return f;
}

uint64_t ThresholdOf(const Field& field, const char* key, uint64_t fallback) {
  auto it = field.metadata.find(key);
  if (it == field.metadata.end()) return fallback;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(it->second.c_str(), &end, 10);
  return end != it->second.c_str() && *end == '\0' ? v : fallback;
}

}  // namespace

BlobV2Thresholds BlobV2ThresholdsOf(const Field& field) {
  BlobV2Thresholds t;
  t.inline_max = ThresholdOf(field, "lance-encoding:blob-inline-size-threshold", t.inline_max);
  t.dedicated = ThresholdOf(field, "lance-encoding:blob-dedicated-size-threshold", t.dedicated);
  t.pack_file = ThresholdOf(field, "lance-encoding:blob-pack-file-size-threshold", t.pack_file);
  return t;
}

bool IsBlobV2Field(const Field& field) {
  if (field.logical_type != "struct") return false;
  if (field.extension_name == kBlobV2ExtensionName) return true;
  auto it = field.metadata.find(kExtensionNameKey);
  return it != field.metadata.end() && it->second == kBlobV2ExtensionName;
}

bool IsBlobV2Descriptor(const Field& field) {
  return field.logical_type == "struct" && field.metadata.count(kBlobKey) > 0 &&
         field.metadata.count(kPackedKey) > 0;
}

std::string BlobV2SidecarFileName(uint32_t blob_id) {
  std::string name;
  for (int bit = 0; bit < 32; ++bit) name += ((blob_id >> bit) & 1) ? '1' : '0';
  return name + ".blob";
}

Field BlobV2DescriptorField(const Field& logical) {
  constexpr int32_t kPlain = 1, kVarBinary = 2;  // legacy encodings the reference records
  Field d;
  d.name = logical.name;
  d.id = logical.id;
  d.parent_id = logical.parent_id;
  d.logical_type = "struct";
  d.nullable = logical.nullable;
  d.metadata = {{kPackedKey, "true"}, {kBlobKey, "true"}};
  d.children = {DescriptorChild("kind", "uint8", kPlain), DescriptorChild("position", "uint64", kPlain),
                DescriptorChild("size", "uint64", kPlain), DescriptorChild("blob_id", "uint32", kPlain),
                DescriptorChild("blob_uri", "string", kVarBinary)};
  return d;
}

}  // namespace lance::file
