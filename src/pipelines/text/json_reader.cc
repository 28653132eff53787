#include <algorithm>
#include <climits>

#include "pipelines/text/components.h"

namespace edgemm::text {

namespace {

const char* json_type_name(const Json& j) { return j.type_name(); }

std::string join_path(const std::string& path, const char* key) { return path.empty() ? key : path + "." + key; }

}  // namespace

Status JsonReader::invalid(const std::string& path, const std::string& what) const {
  return Status(StatusCode::kInvalidModel, source_ + ": " + path + " " + what);
}

Status JsonReader::unsupported(const std::string& path, const std::string& type, const std::string& known) const {
  return Status(StatusCode::kUnsupported,
                source_ + ": " + path + ".type \"" + type + "\" is not supported (supported: " + known + ").");
}

Expected<std::string> JsonReader::type(const Json& j, const std::string& path) const {
  if (!j.is_object()) return invalid(path, std::string("is a JSON ") + json_type_name(j) + ", expected an object.");
  return string(j, path, "type");
}

Expected<std::string> JsonReader::string(const Json& j, const std::string& path, const char* key) const {
  auto it = j.find(key);
  if (it == j.end()) return invalid(join_path(path, key), "is missing.");
  if (!it->is_string()) {
    return invalid(join_path(path, key), std::string("is a JSON ") + json_type_name(*it) + ", expected a string.");
  }
  return it->get<std::string>();
}

Expected<int64_t> JsonReader::integer(const Json& j, const std::string& path, const char* key) const {
  auto it = j.find(key);
  if (it == j.end()) return invalid(join_path(path, key), "is missing.");
  if (!it->is_number_integer()) {
    return invalid(join_path(path, key), std::string("is a JSON ") + json_type_name(*it) + ", expected an integer.");
  }
  return it->get<int64_t>();
}

Expected<const Json*> JsonReader::array(const Json& j, const std::string& path, const char* key) const {
  auto it = j.find(key);
  if (it == j.end()) return invalid(join_path(path, key), "is missing.");
  if (!it->is_array()) {
    return invalid(join_path(path, key), std::string("is a JSON ") + json_type_name(*it) + ", expected an array.");
  }
  return &*it;
}

Expected<const Json*> JsonReader::object(const Json& j, const std::string& path, const char* key) const {
  auto it = j.find(key);
  if (it == j.end()) return invalid(join_path(path, key), "is missing.");
  if (!it->is_object()) {
    return invalid(join_path(path, key), std::string("is a JSON ") + json_type_name(*it) + ", expected an object.");
  }
  return &*it;
}

Expected<bool> JsonReader::opt_bool(const Json& j, const std::string& path, const char* key, bool def) const {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return def;
  if (!it->is_boolean()) {
    return invalid(join_path(path, key), std::string("is a JSON ") + json_type_name(*it) + ", expected a boolean.");
  }
  return it->get<bool>();
}

Expected<std::optional<std::string>> JsonReader::opt_string(const Json& j, const std::string& path,
                                                            const char* key) const {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) {
    return invalid(join_path(path, key), std::string("is a JSON ") + json_type_name(*it) + ", expected a string.");
  }
  return std::optional<std::string>(it->get<std::string>());
}

Expected<std::shared_ptr<const Regex>> JsonReader::pattern(const Json& j, const std::string& path) const {
  EDGEMM_ASSIGN_OR_RETURN(const Json* p, object(j, path, "pattern"));
  const std::string where = source_ + ": " + path + ".pattern";
  if (auto it = p->find("Regex"); it != p->end() && it->is_string()) {
    return Regex::compile(it->get<std::string>(), where);
  }
  if (auto it = p->find("String"); it != p->end() && it->is_string()) {
    return Regex::literal(it->get<std::string>(), where);
  }
  return invalid(path + ".pattern", "must be {\"String\": ...} or {\"Regex\": ...}.");
}

Status read_vocab(const Json& vocab_json, const std::string& path, const JsonReader& r, Vocab& vocab,
                  std::vector<std::string>& vocab_r, std::vector<bool>& has_id) {
  int32_t max_id = -1;
  for (const auto& [token, id] : vocab_json.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
      return r.invalid(path + ".vocab[\"" + token + "\"]", "must be a non-negative integer id.");
    }
    const auto v = static_cast<int32_t>(id.get<int64_t>());
    vocab.emplace(token, v);
    max_id = std::max(max_id, v);
  }
  vocab_r.assign(static_cast<size_t>(max_id + 1), std::string());
  has_id.assign(static_cast<size_t>(max_id + 1), false);
  for (const auto& [token, id] : vocab) {
    vocab_r[static_cast<size_t>(id)] = token;
    has_id[static_cast<size_t>(id)] = true;
  }
  return Status::ok();
}

}  // namespace edgemm::text
