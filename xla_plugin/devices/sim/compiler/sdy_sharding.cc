#include "xla_plugin/devices/sim/compiler/sdy_sharding.h"

#include <cctype>

namespace pjrtkit {
namespace sim {
namespace {

// A cursor over the text with the few reads the two forms need.
class Reader {
 public:
  explicit Reader(const std::string& text) : text_(text) {}

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Eat(const std::string& token) {
    SkipSpace();
    if (text_.compare(pos_, token.size(), token) != 0) return false;
    pos_ += token.size();
    return true;
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool Done() {
    SkipSpace();
    return pos_ >= text_.size();
  }
  // A bare name: letters, digits, '_', '.', '$', '-'.
  bool Name(std::string* out) {
    SkipSpace();
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
            text_[pos_] == '.' || text_[pos_] == '$' || text_[pos_] == '-')) {
      ++pos_;
    }
    *out = text_.substr(start, pos_ - start);
    return !out->empty();
  }
  // A double-quoted string (escapes kept as written; axis names have none).
  bool Quoted(std::string* out) {
    SkipSpace();
    if (pos_ >= text_.size() || text_[pos_] != '"') return false;
    const size_t end = text_.find('"', pos_ + 1);
    if (end == std::string::npos) return false;
    *out = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return true;
  }
  bool Integer(int64_t* out) {
    SkipSpace();
    const size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      value = value * 10 + (text_[pos_++] - '0');
      if (value > (int64_t{1} << 40)) return false;
    }
    *out = value;
    return pos_ > start;
  }
  bool IntegerList(std::vector<int64_t>* out) {
    if (!Eat("[")) return false;
    out->clear();
    while (!Eat("]")) {
      int64_t v = 0;
      if (!Integer(&v)) return false;
      out->push_back(v);
      Eat(",");
    }
    return true;
  }

 private:
  const std::string& text_;
  size_t pos_ = 0;
};

Status Bad(const std::string& what, const std::string& text) {
  return InvalidArgument("cannot read the Shardy " + what + " '" + text + "'");
}

// `#sdy.mesh<[...], device_ids=[...]>` after the name.
bool ReadMesh(Reader& r, SdyMesh* mesh) {
  if (!r.Eat("#sdy.mesh<") || !r.Eat("[")) return false;
  while (!r.Eat("]")) {
    std::string name;
    int64_t size = 0;
    if (!r.Quoted(&name) || !r.Eat("=") || !r.Integer(&size) || size < 1) return false;
    mesh->axes.push_back({name, size});
    r.Eat(",");
  }
  if (r.Eat(",")) {
    if (!r.Eat("device_ids") || !r.Eat("=") || !r.IntegerList(&mesh->device_ids)) return false;
  }
  return r.Eat(">");
}

}  // namespace

StatusOr<std::map<std::string, SdyMesh>> ParseSdyMeshes(const std::string& text) {
  Reader r(text);
  std::map<std::string, SdyMesh> meshes;
  if (!r.Eat("{")) return Bad("meshes", text);
  while (!r.Eat("}")) {
    std::string name;
    SdyMesh mesh;
    if (!r.Name(&name) || !r.Eat("=") || !ReadMesh(r, &mesh)) return Bad("meshes", text);
    meshes[name] = std::move(mesh);
    r.Eat(",");
  }
  if (!r.Done()) return Bad("meshes", text);
  return meshes;
}

StatusOr<std::set<std::string>> ParseSdyManualAxes(const std::string& text) {
  Reader r(text);
  std::set<std::string> axes;
  if (!r.Eat("#sdy<manual_axes{")) return Bad("manual axes", text);
  while (!r.Eat("}")) {
    std::string axis;
    if (!r.Quoted(&axis)) return Bad("manual axes", text);
    axes.insert(axis);
    r.Eat(",");
  }
  if (!r.Eat(">") || !r.Done()) return Bad("manual axes", text);
  return axes;
}

StatusOr<std::vector<TileSharding>> ParseSdyShardings(
    const std::string& text, const std::map<std::string, SdyMesh>& meshes,
    const std::vector<int>& ranks, int64_t devices, const std::set<std::string>* only_axes) {
  Reader r(text);
  bool per_value = false;
  if (r.Eat("#sdy.sharding_per_value<")) {
    per_value = true;
    if (!r.Eat("[")) return Bad("sharding", text);
  } else if (!r.Eat("#sdy.sharding")) {
    return Bad("sharding", text);
  }
  std::vector<TileSharding> out;
  while (per_value ? !r.Eat("]") : out.empty()) {
    if (out.size() >= ranks.size()) {
      return InvalidArgument("the Shardy sharding '" + text + "' has more values than the " +
                             std::to_string(ranks.size()) + " expected");
    }
    std::string mesh_name;
    if (!r.Eat("<") || !r.Eat("@") || !r.Name(&mesh_name) || !r.Eat(",") || !r.Eat("[")) {
      return Bad("sharding", text);
    }
    auto found = meshes.find(mesh_name);
    if (found == meshes.end()) {
      return InvalidArgument("the Shardy sharding '" + text + "' names the mesh @" + mesh_name +
                             ", which the module does not declare");
    }
    const SdyMesh& mesh = found->second;
    int64_t positions = 1;
    for (const auto& axis : mesh.axes) {
      if (positions > devices / axis.second) {
        positions = devices + 1;  // More than the program's devices: refused below.
        break;
      }
      positions *= axis.second;
    }
    if (positions != devices ||
        (!mesh.device_ids.empty() && static_cast<int64_t>(mesh.device_ids.size()) != devices)) {
      return InvalidArgument("the Shardy mesh @" + mesh_name + " spans " +
                             std::to_string(positions) + " devices of the program's " +
                             std::to_string(devices));
    }
    // Each dimension's axes: indices into mesh.axes.
    std::vector<std::vector<size_t>> dims;
    while (!r.Eat("]")) {
      if (!r.Eat("{")) return Bad("sharding", text);
      std::vector<size_t> axes;
      while (!r.Eat("}")) {
        if (r.Eat("?")) {
          r.Eat(",");
          continue;
        }
        std::string axis;
        if (!r.Quoted(&axis)) return Bad("sharding", text);
        if (r.Peek(':')) {
          return Unimplemented("the Shardy sharding '" + text + "' cuts a dimension by a sub-axis "
                               "of \"" + axis + "\"");
        }
        size_t index = 0;
        while (index < mesh.axes.size() && mesh.axes[index].first != axis) ++index;
        if (index == mesh.axes.size()) {
          return InvalidArgument("the Shardy sharding '" + text + "' names the axis \"" + axis +
                                 "\", which mesh @" + mesh_name + " does not have");
        }
        if (only_axes == nullptr || only_axes->count(axis) > 0) axes.push_back(index);
        r.Eat(",");
      }
      std::string priority;
      if (r.Peek('p')) r.Name(&priority);  // p0, p1: propagation priorities.
      dims.push_back(std::move(axes));
      r.Eat(",");
    }
    // replicated={...} / unreduced={...}: axes that do not cut.
    while (r.Eat(",")) {
      std::string key;
      if (!r.Name(&key) || !r.Eat("=") || !r.Eat("{")) return Bad("sharding", text);
      while (!r.Eat("}")) {
        std::string axis;
        if (!r.Quoted(&axis)) return Bad("sharding", text);
        r.Eat(",");
      }
    }
    if (!r.Eat(">")) return Bad("sharding", text);
    r.Eat(",");
    const int rank = ranks[out.size()];
    if (static_cast<int>(dims.size()) != rank) {
      return InvalidArgument("the Shardy sharding '" + text + "' has " +
                             std::to_string(dims.size()) + " dimensions for a value of rank " +
                             std::to_string(rank));
    }
    // Mesh position p (row-major over the axes) is device device_ids[p] (or p).
    std::vector<int64_t> tiles(static_cast<size_t>(rank), 1);
    for (int d = 0; d < rank; ++d) {
      for (size_t a : dims[d]) {
        if (tiles[d] > devices / mesh.axes[a].second) {
          return InvalidArgument("the Shardy sharding '" + text + "' cuts dimension " +
                                 std::to_string(d) + " into more pieces than the " +
                                 std::to_string(devices) + " devices");
        }
        tiles[d] *= mesh.axes[a].second;
      }
    }
    std::vector<std::vector<int64_t>> coords(static_cast<size_t>(devices),
                                             std::vector<int64_t>(static_cast<size_t>(rank), 0));
    std::vector<bool> seen(static_cast<size_t>(devices), false);
    for (int64_t p = 0; p < devices; ++p) {
      std::vector<int64_t> position(mesh.axes.size(), 0);
      int64_t rest = p;
      for (size_t a = mesh.axes.size(); a-- > 0;) {
        position[a] = rest % mesh.axes[a].second;
        rest /= mesh.axes[a].second;
      }
      const int64_t device = mesh.device_ids.empty() ? p : mesh.device_ids[p];
      if (device < 0 || device >= devices || seen[device]) {
        return InvalidArgument("the Shardy mesh @" + mesh_name + " does not name every device "
                               "of the program once");
      }
      seen[device] = true;
      for (int d = 0; d < rank; ++d) {
        int64_t c = 0;
        for (size_t a : dims[d]) c = c * mesh.axes[a].second + position[a];
        coords[device][d] = c;
      }
    }
    PJRTKIT_ASSIGN_OR_RETURN(TileSharding tiling,
                             TileSharding::Make(std::move(tiles), std::move(coords)));
    out.push_back(std::move(tiling));
  }
  if (!r.Done() && !(r.Eat(">") && r.Done())) return Bad("sharding", text);
  if (out.size() != ranks.size()) {
    return InvalidArgument("the Shardy sharding '" + text + "' has " + std::to_string(out.size()) +
                           " values, " + std::to_string(ranks.size()) + " expected");
  }
  return out;
}

}  // namespace sim
}  // namespace pjrtkit
