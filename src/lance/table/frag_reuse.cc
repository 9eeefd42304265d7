#include "lance/table/frag_reuse.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string_view>

#include "lance/frag_reuse.pb.h"
#include "lance/util/protobuf.h"

namespace lance::table {
namespace {

using pb::table::FragmentReuseIndexDetails;

Result<FragReuseDetails> FromProto(const FragmentReuseIndexDetails::InlineContent& content) {
  FragReuseDetails out;
  for (const auto& v : content.versions()) {
    FragReuseVersion version;
    version.dataset_version = v.dataset_version();
    for (const auto& g : v.groups()) {
      FragReuseGroup group;
      group.changed_row_addrs = g.changed_row_addrs();
      for (const auto& d : g.old_fragments()) group.old_fragments.push_back({d.id(), d.physical_rows(), d.num_deleted_rows()});
      for (const auto& d : g.new_fragments()) group.new_fragments.push_back({d.id(), d.physical_rows(), d.num_deleted_rows()});
      version.groups.push_back(std::move(group));
    }
    out.versions.push_back(std::move(version));
  }
  return out;
}

void ToProto(const FragDigest& d, FragmentReuseIndexDetails::FragmentDigest* out) {
  out->set_id(d.id);
  out->set_physical_rows(d.physical_rows);
  out->set_num_deleted_rows(d.num_deleted_rows);
}

}  // namespace

const IndexMetadata* FindFragReuseIndex(const std::vector<IndexMetadata>& indices) {
  for (const auto& i : indices) {
    if (i.name == kFragReuseIndexName) return &i;
  }
  return nullptr;
}

Result<FragReuseDetails> LoadFragReuseDetails(const io::ObjectStore& store, const IndexMetadata& index) {
  const std::string context = "fragment reuse index " + index.UuidString() + " of " + store.uri();
  const std::string_view url = index.index_details_type_url;
  constexpr std::string_view kSuffix = "FragmentReuseIndexDetails";
  if (url.size() < kSuffix.size() || url.substr(url.size() - kSuffix.size()) != kSuffix) {
    return Status::Invalid(context, ": its details are not FragmentReuseIndexDetails (", url, ")");
  }
  FragmentReuseIndexDetails details;
  if (!util::ParseMessage(index.index_details_value, &details)) {
    return Status::Invalid(context, ": its details do not parse");
  }
  switch (details.content_case()) {
    case FragmentReuseIndexDetails::kInline:
      return FromProto(details.inline_());
    case FragmentReuseIndexDetails::kExternal: {
      const auto& file = details.external();
      if (file.path().empty()) return Status::Invalid(context, ": external details without a path");
      const std::string rel = "_indices/" + index.UuidString() + "/" + file.path();
      if (file.offset() > static_cast<uint64_t>(INT64_MAX) || file.size() > static_cast<uint64_t>(INT64_MAX)) {
        return Status::Invalid(context, ": external details at an impossible range of ", rel);
      }
      LANCE_ASSIGN_OR_RAISE(auto bytes, store.ReadRange(rel, static_cast<int64_t>(file.offset()),
                                                        static_cast<int64_t>(file.size())));
      FragmentReuseIndexDetails::InlineContent content;
      if (!util::ParseMessage(bytes, &content)) return Status::Invalid(context, ": ", rel, " does not parse");
      return FromProto(content);
    }
    default:
      return Status::Invalid(context, ": its details have no content");
  }
}

namespace {

// The versions sorted by dataset version, as pylance writes them.
FragmentReuseIndexDetails::InlineContent ContentOf(const FragReuseDetails& details) {
  std::vector<const FragReuseVersion*> sorted;
  for (const auto& v : details.versions) sorted.push_back(&v);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto* a, const auto* b) { return a->dataset_version < b->dataset_version; });
  FragmentReuseIndexDetails::InlineContent content;
  for (const FragReuseVersion* v : sorted) {
    auto* version = content.add_versions();
    version->set_dataset_version(v->dataset_version);
    for (const auto& g : v->groups) {
      auto* group = version->add_groups();
      group->set_changed_row_addrs(g.changed_row_addrs);
      for (const auto& d : g.old_fragments) ToProto(d, group->add_old_fragments());
      for (const auto& d : g.new_fragments) ToProto(d, group->add_new_fragments());
    }
  }
  return content;
}

}  // namespace

std::string SerializeFragReuseVersions(const FragReuseDetails& details) {
  return ContentOf(details).SerializeAsString();
}

std::string FragReuseDetailsValue(const FragReuseDetails& details, std::string* external) {
  FragmentReuseIndexDetails out;
  auto content = ContentOf(details);
  if (content.ByteSizeLong() > kFragReuseInlineLimit) {
    *external = content.SerializeAsString();
    out.mutable_external()->set_path(kFragReuseDetailsFile);
    out.mutable_external()->set_size(external->size());
  } else {
    out.mutable_inline_()->Swap(&content);
    external->clear();
  }
  return out.SerializeAsString();
}

void RemapFragmentBitmap(const FragReuseDetails& details, std::vector<uint32_t>* fragment_ids) {
  std::set<uint32_t> bitmap(fragment_ids->begin(), fragment_ids->end());
  for (const auto& v : details.versions) {
    for (const auto& g : v.groups) {
      size_t removed = 0;
      for (const auto& old : g.old_fragments) removed += bitmap.erase(static_cast<uint32_t>(old.id));
      // A bitmap holding only some of a group's old fragments loses them
      // and gains none of its new ones (their rows were not all indexed),
      // as pylance 14 reads it.
      if (removed == 0 || removed != g.old_fragments.size()) continue;
      for (const auto& f : g.new_fragments) bitmap.insert(static_cast<uint32_t>(f.id));
    }
  }
  fragment_ids->assign(bitmap.begin(), bitmap.end());
}

Result<std::shared_ptr<const FragReuseDetails>> ApplyFragReuseToBitmaps(const io::ObjectStore& store,
                                                                        std::vector<IndexMetadata>* indices) {
  const IndexMetadata* fri = FindFragReuseIndex(*indices);
  if (fri == nullptr) return std::shared_ptr<const FragReuseDetails>();
  LANCE_ASSIGN_OR_RAISE(auto details, LoadFragReuseDetails(store, *fri));
  for (auto& index : *indices) {
    if (index.fragment_ids) RemapFragmentBitmap(details, &*index.fragment_ids);
  }
  return std::make_shared<const FragReuseDetails>(std::move(details));
}

}  // namespace lance::table
