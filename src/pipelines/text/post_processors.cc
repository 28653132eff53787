// Post-processors of tokenizer.json (tokenizers/src/processors in the Rust crate): the special
// tokens added around a single encoded sequence.
#include "pipelines/text/components.h"

namespace edgemm::text {

namespace {

/// A template for one sequence: the special-token ids and type ids before and after it.
class Template final : public PostProcessor {
 public:
  struct Piece {
    bool is_sequence;
    std::vector<int32_t> ids;  // special tokens
    int32_t type_id;
  };
  explicit Template(std::vector<Piece> pieces) : pieces_(std::move(pieces)) {}

  int added_tokens() const override {
    int n = 0;
    for (const auto& p : pieces_) n += p.is_sequence ? 0 : static_cast<int>(p.ids.size());
    return n;
  }
  void process(Sequence& seq, bool add_special_tokens) const override {
    if (!add_special_tokens) return;
    Sequence out;
    for (const auto& p : pieces_) {
      if (p.is_sequence) {
        out.ids.insert(out.ids.end(), seq.ids.begin(), seq.ids.end());
        out.type_ids.insert(out.type_ids.end(), seq.ids.size(), p.type_id);
        out.special.insert(out.special.end(), seq.special.begin(), seq.special.end());
      } else {
        out.ids.insert(out.ids.end(), p.ids.begin(), p.ids.end());
        out.type_ids.insert(out.type_ids.end(), p.ids.size(), p.type_id);
        out.special.insert(out.special.end(), p.ids.size(), 1);
      }
    }
    seq = std::move(out);
  }

 private:
  std::vector<Piece> pieces_;
};

class Identity final : public PostProcessor {
 public:
  int added_tokens() const override { return 0; }
  void process(Sequence&, bool) const override {}
};

class SequenceProcessor final : public PostProcessor {
 public:
  explicit SequenceProcessor(std::vector<std::unique_ptr<PostProcessor>> parts) : parts_(std::move(parts)) {}
  int added_tokens() const override {
    int n = 0;
    for (const auto& p : parts_) n += p->added_tokens();
    return n;
  }
  void process(Sequence& seq, bool add_special_tokens) const override {
    for (const auto& p : parts_) p->process(seq, add_special_tokens);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> parts_;
};

/// RobertaProcessing / BertProcessing "cls" / "sep": ["<s>", 0].
Expected<int32_t> special_id(const Json& j, const std::string& path, const char* key, const JsonReader& r) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array() || it->size() != 2 || !(*it)[0].is_string() || !(*it)[1].is_number_integer()) {
    return r.invalid(path + "." + key, "must be a pair [\"token\", id].");
  }
  return static_cast<int32_t>((*it)[1].get<int64_t>());
}

Expected<std::unique_ptr<PostProcessor>> load_template(const Json& j, const std::string& path, const JsonReader& r) {
  EDGEMM_ASSIGN_OR_RETURN(const Json* single, r.array(j, path, "single"));
  const Json* specials = nullptr;
  if (auto it = j.find("special_tokens"); it != j.end() && it->is_object()) specials = &*it;
  std::vector<Template::Piece> pieces;
  for (size_t i = 0; i < single->size(); ++i) {
    const Json& item = (*single)[i];
    const std::string where = path + ".single[" + std::to_string(i) + "]";
    if (auto it = item.find("Sequence"); item.is_object() && it != item.end()) {
      EDGEMM_ASSIGN_OR_RETURN(int64_t type_id, r.integer(*it, where + ".Sequence", "type_id"));
      pieces.push_back({true, {}, static_cast<int32_t>(type_id)});
    } else if (auto st = item.find("SpecialToken"); item.is_object() && st != item.end()) {
      EDGEMM_ASSIGN_OR_RETURN(std::string name, r.string(*st, where + ".SpecialToken", "id"));
      EDGEMM_ASSIGN_OR_RETURN(int64_t type_id, r.integer(*st, where + ".SpecialToken", "type_id"));
      auto sp = specials ? specials->find(name) : Json::const_iterator();
      if (!specials || sp == specials->end()) {
        return r.invalid(where, "names special token \"" + name + "\", missing from " + path + ".special_tokens.");
      }
      EDGEMM_ASSIGN_OR_RETURN(const Json* ids, r.array(*sp, path + ".special_tokens." + name, "ids"));
      Template::Piece piece{false, {}, static_cast<int32_t>(type_id)};
      for (const auto& id : *ids) {
        if (!id.is_number_integer()) return r.invalid(path + ".special_tokens." + name + ".ids", "must hold ids.");
        piece.ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
      }
      pieces.push_back(std::move(piece));
    } else {
      return r.invalid(where, "must be {\"Sequence\": ...} or {\"SpecialToken\": ...}.");
    }
  }
  return std::unique_ptr<PostProcessor>(new Template(std::move(pieces)));
}

}  // namespace

Expected<std::unique_ptr<PostProcessor>> load_post_processor(const Json& j, const std::string& path,
                                                             const JsonReader& r) {
  if (j.is_null()) return std::unique_ptr<PostProcessor>();
  EDGEMM_ASSIGN_OR_RETURN(std::string type, r.type(j, path));
  if (type == "ByteLevel") return std::unique_ptr<PostProcessor>(new Identity());
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    EDGEMM_ASSIGN_OR_RETURN(int32_t cls, special_id(j, path, "cls", r));
    EDGEMM_ASSIGN_OR_RETURN(int32_t sep, special_id(j, path, "sep", r));
    return std::unique_ptr<PostProcessor>(new Template({{false, {cls}, 0}, {true, {}, 0}, {false, {sep}, 0}}));
  }
  if (type == "TemplateProcessing") return load_template(j, path, r);
  if (type == "Sequence") {
    EDGEMM_ASSIGN_OR_RETURN(const Json* list, r.array(j, path, "processors"));
    std::vector<std::unique_ptr<PostProcessor>> parts;
    for (size_t i = 0; i < list->size(); ++i) {
      EDGEMM_ASSIGN_OR_RETURN(auto part,
                              load_post_processor((*list)[i], path + ".processors[" + std::to_string(i) + "]", r));
      if (part) parts.push_back(std::move(part));
    }
    return std::unique_ptr<PostProcessor>(new SequenceProcessor(std::move(parts)));
  }
  return r.unsupported(path, type, "ByteLevel, RobertaProcessing, BertProcessing, TemplateProcessing, Sequence");
}

}  // namespace edgemm::text
