#include "lance/table/frag_reuse.h"

#include <algorithm>
#include <set>
#include <string_view>

namespace lance::table {
namespace {

// ---- The protobuf wire format, for the few messages of the details ----

class Wire {
 public:
  Wire(std::string_view bytes, std::string context) : bytes_(bytes), context_(std::move(context)) {}
  bool done() const { return pos_ >= bytes_.size(); }
  Result<uint64_t> Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= bytes_.size()) return Bad("truncated varint");
      const auto c = static_cast<uint8_t>(bytes_[pos_++]);
      v |= uint64_t{c & 0x7Fu} << shift;
      if (c < 0x80) return v;
    }
    return Bad("overlong varint");
  }
  // The next field: its number, and its value (varint, or bytes).
  Status Next(uint32_t* field, uint64_t* number, std::string_view* bytes) {
    LANCE_ASSIGN_OR_RAISE(uint64_t key, Varint());
    *field = static_cast<uint32_t>(key >> 3);
    switch (key & 7) {
      case 0: {
        LANCE_ASSIGN_OR_RAISE(*number, Varint());
        return Status::OK();
      }
      case 2: {
        LANCE_ASSIGN_OR_RAISE(uint64_t n, Varint());
        if (n > bytes_.size() - pos_) return Bad("truncated field").status();
        *bytes = bytes_.substr(pos_, n);
        pos_ += n;
        return Status::OK();
      }
      case 1:
        if (bytes_.size() - pos_ < 8) return Bad("truncated field").status();
        pos_ += 8;
        return Status::OK();
      case 5:
        if (bytes_.size() - pos_ < 4) return Bad("truncated field").status();
        pos_ += 4;
        return Status::OK();
      default: return Bad("unsupported wire type").status();
    }
  }
  const std::string& context() const { return context_; }

 private:
  Result<uint64_t> Bad(const char* what) const { return Status::Invalid(context_, ": ", what); }
  std::string_view bytes_;
  std::string context_;
  size_t pos_ = 0;
};

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
// proto3: a zero scalar is not written.
void PutUint(std::string* out, uint32_t field, uint64_t v) {
  if (v == 0) return;
  PutVarint(out, (uint64_t{field} << 3) | 0);
  PutVarint(out, v);
}
void PutBytes(std::string* out, uint32_t field, std::string_view v) {
  PutVarint(out, (uint64_t{field} << 3) | 2);
  PutVarint(out, v.size());
  out->append(v);
}

Result<FragDigest> ParseDigest(std::string_view bytes, const std::string& context) {
  Wire w(bytes, context + " fragment digest");
  FragDigest d;
  while (!w.done()) {
    uint32_t f;
    uint64_t n = 0;
    std::string_view b;
    LANCE_RETURN_NOT_OK(w.Next(&f, &n, &b));
    if (f == 1) d.id = n;
    if (f == 2) d.physical_rows = n;
    if (f == 3) d.num_deleted_rows = n;
  }
  return d;
}

Result<FragReuseGroup> ParseGroup(std::string_view bytes, const std::string& context) {
  Wire w(bytes, context + " group");
  FragReuseGroup g;
  while (!w.done()) {
    uint32_t f;
    uint64_t n = 0;
    std::string_view b;
    LANCE_RETURN_NOT_OK(w.Next(&f, &n, &b));
    if (f == 1) g.changed_row_addrs = std::string(b);
    if (f == 2) {
      LANCE_ASSIGN_OR_RAISE(auto d, ParseDigest(b, context));
      g.old_fragments.push_back(d);
    }
    if (f == 3) {
      LANCE_ASSIGN_OR_RAISE(auto d, ParseDigest(b, context));
      g.new_fragments.push_back(d);
    }
  }
  return g;
}

Result<FragReuseDetails> ParseVersions(std::string_view bytes, const std::string& context) {
  Wire w(bytes, context);
  FragReuseDetails out;
  while (!w.done()) {
    uint32_t f;
    uint64_t n = 0;
    std::string_view b;
    LANCE_RETURN_NOT_OK(w.Next(&f, &n, &b));
    if (f != 1) continue;
    Wire vw(b, context + " version");
    FragReuseVersion v;
    while (!vw.done()) {
      uint32_t vf;
      uint64_t vn = 0;
      std::string_view vb;
      LANCE_RETURN_NOT_OK(vw.Next(&vf, &vn, &vb));
      if (vf == 1) v.dataset_version = vn;
      if (vf == 3) {
        LANCE_ASSIGN_OR_RAISE(auto g, ParseGroup(vb, context));
        v.groups.push_back(std::move(g));
      }
    }
    out.versions.push_back(std::move(v));
  }
  return out;
}

std::string SerializeDigest(const FragDigest& d) {
  std::string out;
  PutUint(&out, 1, d.id);
  PutUint(&out, 2, d.physical_rows);
  PutUint(&out, 3, d.num_deleted_rows);
  return out;
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
  Wire w(index.index_details_value, context);
  while (!w.done()) {
    uint32_t f;
    uint64_t n = 0;
    std::string_view b;
    LANCE_RETURN_NOT_OK(w.Next(&f, &n, &b));
    if (f == 1) return ParseVersions(b, context);
    if (f == 2) {
      Wire ew(b, context + " external file");
      std::string path;
      uint64_t offset = 0, size = 0;
      while (!ew.done()) {
        uint32_t ef;
        uint64_t en = 0;
        std::string_view eb;
        LANCE_RETURN_NOT_OK(ew.Next(&ef, &en, &eb));
        if (ef == 1) path = std::string(eb);
        if (ef == 2) offset = en;
        if (ef == 3) size = en;
      }
      if (path.empty()) return Status::Invalid(context, ": external details without a path");
      const std::string rel = "_indices/" + index.UuidString() + "/" + path;
      LANCE_ASSIGN_OR_RAISE(auto bytes, store.ReadRange(rel, static_cast<int64_t>(offset), static_cast<int64_t>(size)));
      return ParseVersions(bytes, context + " (" + rel + ")");
    }
  }
  return Status::Invalid(context, ": its details have no content");
}

std::string SerializeFragReuseVersions(const FragReuseDetails& details) {
  std::vector<const FragReuseVersion*> sorted;
  for (const auto& v : details.versions) sorted.push_back(&v);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto* a, const auto* b) { return a->dataset_version < b->dataset_version; });
  std::string out;
  for (const FragReuseVersion* v : sorted) {
    std::string vb;
    PutUint(&vb, 1, v->dataset_version);
    for (const auto& g : v->groups) {
      std::string gb;
      if (!g.changed_row_addrs.empty()) PutBytes(&gb, 1, g.changed_row_addrs);
      for (const auto& d : g.old_fragments) PutBytes(&gb, 2, SerializeDigest(d));
      for (const auto& d : g.new_fragments) PutBytes(&gb, 3, SerializeDigest(d));
      PutBytes(&vb, 3, gb);
    }
    PutBytes(&out, 1, vb);
  }
  return out;
}

std::string FragReuseDetailsValue(const FragReuseDetails& details, std::string* external) {
  std::string content = SerializeFragReuseVersions(details);
  std::string out;
  if (content.size() > kFragReuseInlineLimit) {
    std::string file;
    PutBytes(&file, 1, kFragReuseDetailsFile);
    PutUint(&file, 3, content.size());
    PutBytes(&out, 2, file);
    *external = std::move(content);
  } else {
    PutBytes(&out, 1, content);
    external->clear();
  }
  return out;
}

Status RemapFragmentBitmap(const FragReuseDetails& details, std::vector<uint32_t>* fragment_ids) {
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
  return Status::OK();
}

Status ApplyFragReuseToBitmaps(const io::ObjectStore& store, std::vector<IndexMetadata>* indices) {
  const IndexMetadata* fri = FindFragReuseIndex(*indices);
  if (fri == nullptr) return Status::OK();
  LANCE_ASSIGN_OR_RAISE(auto details, LoadFragReuseDetails(store, *fri));
  for (auto& index : *indices) {
    if (!index.fragment_ids) continue;
    Status st = RemapFragmentBitmap(details, &*index.fragment_ids);
    if (!st.ok()) return st.WithMessage("index '", index.name, "' (", index.UuidString(), "): ", st.message());
  }
  return Status::OK();
}

}  // namespace lance::table
