// hookforge/config/builder.hpp — turns a validated document into objects.
//
//   hookforge::config::builder b{std::move(doc), {.strict = false}};
//   auto epochs = b.get<int>("trainer.params.epochs");
//   auto model  = b.get<std::shared_ptr<Model>>("model");   // a kind declared for Model
//
// `read<T>(value)` resolves the value's `${...}` and converts it with value_traits<T>.
// An entry (`{_target: Name, params: {...}}`) is built through the registry of the kind
// its parameter expects. Each entry of the document builds at most one object: built
// objects are kept by key path, so `${ref:a.b}` anywhere gives the object at a.b, built
// the first time it is needed and the same object afterwards. A `${ref}` cycle (a's
// parameters need b, b's need a) is reported with its chain, never followed.
#pragma once

#include <any>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "hookforge/config/convert.hpp"
#include "hookforge/config/document.hpp"
#include "hookforge/config/error.hpp"
#include "hookforge/config/keys.hpp"
#include "hookforge/config/output_path.hpp"
#include "hookforge/config/registry.hpp"

namespace hookforge::config {

namespace detail {
/// "a hook", "an optimizer": a kind's name with its indefinite article.
inline std::string a_kind(std::string_view kind) {
  const bool vowel =
      !kind.empty() && std::string_view("aeiou").find(kind.front()) != std::string_view::npos;
  return fmt::format("{} {}", vowel ? "an" : "a", kind);
}
}  // namespace detail

struct build_options {
  /// Every runtime-binding warning (a hook that binds to no point of its component, a
  /// point name that looks misspelled) is a config_error instead.
  bool strict = false;
  /// The rank of the process this build is for (a data-parallel run: hookforge-run's ranks).
  /// On a rank other than 0, a hook that is rank-zero-only (its class's default, or its
  /// entry's `rank_zero_only:`) is attached with every handler disabled: it keeps its state
  /// key (checkpoints agree) and does nothing (config/hooks.hpp).
  int rank = 0;
  /// The run's output directory: a parameter marked output_path that is relative is placed
  /// under it, and one that leads out of it is a config_error (config/output_path.hpp).
  /// Empty: output paths are taken as written.
  std::filesystem::path output_dir{};
  /// Output paths may lead out of output_dir (hookforge-run --allow-outside-output).
  bool paths_outside_output = false;
  /// Added to the message for a `_target` that no class is registered under: where a
  /// class of one's own would have to be registered (hookforge-run says which program).
  std::string unregistered_note{};
};

/// A value that names something known only once everything is built (a validation score
/// a hook monitors): field_spec::naming has the builder note it, with its place, for the
/// program to check against what was built.
struct named_reference {
  std::string what;  ///< what it names ("a validation score")
  std::string name;
  location where;
  std::string key;
  /// false where the config leaves the value out and `name` is its default: `where` is
  /// then the entry's, and `key` the key it would have.
  bool written = true;
  /// For a name a hook's handler uses (a batch field it reads): "Hook::method" and the
  /// points it is bound to in this entry. Empty for an option's value.
  std::string reader{};
  std::vector<std::string> points{};
};

class builder {
 public:
  /// Validates `doc` (see document::validate). Throws config_error.
  explicit builder(document doc, build_options options = {})
      : doc_(std::make_unique<document>(std::move(doc))), options_(options) {
    doc_->validate();
  }

  const document& doc() const { return *doc_; }
  const build_options& options() const { return options_; }

  /// Note a value that names something known only later (see named_reference).
  void note_name(named_reference r) { named_.push_back(std::move(r)); }
  /// The values noted so far, in the order they were read.
  const std::vector<named_reference>& named_references() const { return named_; }

  /// Where the output path `written` (read from `v`) goes: under options().output_dir, and
  /// refused at `v` when it leads out of it and the options do not allow that. An empty
  /// path stays empty (the class's own default place).
  std::filesystem::path output_path(const value& v, const std::filesystem::path& written) const {
    if (written.empty() || options_.output_dir.empty()) return written;
    auto placed = place_under(options_.output_dir, written);
    if (!options_.paths_outside_output && !stays_inside(options_.output_dir, placed))
      throw config_error(
          v.where(), v.key(),
          fmt::format("a path inside the run's output directory '{}' (a relative path is taken "
                      "under it; hookforge-run --allow-outside-output lets a config write "
                      "elsewhere)",
                      options_.output_dir.string()),
          fmt::format(
              "'{}', which leads to '{}', outside it", written.string(),
              std::filesystem::weakly_canonical(std::filesystem::absolute(placed)).string()));
    return placed;
  }

  /// The value at dotted `path` (throws config_error when there is none).
  value at(std::string_view path) const { return doc_->at(path); }
  bool has(std::string_view path) const {
    try {
      doc_->at(path);
      return true;
    } catch (const config_error&) {
      return false;
    }
  }

  /// Convert `v` (its `${...}` resolved) to T.
  template <class T>
  T read(const value& v) {
    static_assert(
        readable<T>,
        "hookforge::config: no value_traits<T> — declare T's kind (HOOKFORGE_DECLARE_KIND) "
        "or specialise hookforge::config::value_traits<T>");
    if constexpr (readable<T>)
      return value_traits<T>::read(*this, doc_->resolve(v));
    else
      throw std::logic_error("unreachable");  // the assertion above is the one message
  }

  template <class T>
  T get(std::string_view path) {
    return read<T>(at(path));
  }

  /// The object an entry or a `${ref:path}` stands for, built once.
  template <class Handle>
    requires kind_handle<Handle>
  Handle build(const value& written) {
    value v = doc_->resolve(written);
    if (auto path = v.reference(); !path.empty()) return build_at<Handle>(doc_->at(path, &v), v);
    return build_at<Handle>(v, v);
  }

 private:
  std::vector<named_reference> named_;
  struct built {
    std::any handle;
    std::string kind;
  };

  template <class Handle>
  Handle build_at(const value& target, const value& use) {
    constexpr std::string_view kind = kind_traits<Handle>::name;
    const auto& key = target.key();
    if (auto it = built_.find(key); it != built_.end()) {
      if (auto* h = std::any_cast<Handle>(&it->second.handle)) return *h;
      throw config_error(
          use.where(), use.key(), detail::a_kind(kind),
          fmt::format("{}, which is built as {}", key, detail::a_kind(it->second.kind)));
    }
    for (std::size_t i = 0; i < building_.size(); ++i)
      if (building_[i] == key) {
        std::string chain;
        for (std::size_t j = i; j < building_.size(); ++j) chain += building_[j] + " -> ";
        throw config_error(use.where(), use.key(), "a ${ref} that does not depend on itself",
                           fmt::format("the cycle {}{}", chain, key));
      }
    if (building_.size() >= doc_->bounds().max_depth)
      throw config_error(
          use.where(), use.key(),
          fmt::format("at most {} objects built within each other", doc_->bounds().max_depth),
          "more");
    building_.push_back(key);
    struct pop {
      std::vector<std::string>& s;
      ~pop() { s.pop_back(); }
    } guard{building_};

    value entry = doc_->resolve(target);
    Handle handle = entry.is_reference() ? build<Handle>(entry) : construct<Handle>(entry);
    built_.emplace(key, built{handle, std::string(kind)});
    return handle;
  }

  template <class Handle>
  Handle construct(const value& entry) {
    constexpr std::string_view kind = kind_traits<Handle>::name;
    if (!entry.is_map())
      throw config_error(
          entry.where(), entry.key(),
          fmt::format("{}: a mapping with _target, or ${{ref:path}}", detail::a_kind(kind)),
          entry.describe());
    auto target_value = entry.find("_target");
    if (!target_value)
      throw config_error(entry.where(), entry.key(),
                         fmt::format("{}: a mapping with _target naming a registered {}",
                                     detail::a_kind(kind), kind),
                         "a mapping without _target");
    value target = doc_->resolve(*target_value);
    if (!target.is_scalar() || target.is_reference())
      throw config_error(target.where(), target.key(),
                         fmt::format("the name of a registered {}", kind), target.describe());
    auto& reg = registry<Handle>::instance();
    const auto* found = reg.find(target.scalar());
    if (!found) {
      auto note = detail::closest_note(target.scalar(), reg.names(),
                                       fmt::format("no {} is registered", kind));
      if (!options_.unregistered_note.empty()) note += "; " + options_.unregistered_note;
      throw config_error(target.where(), target.key(), fmt::format("a registered {}", kind),
                         target.describe(), note);
    }
    if (!found->clashes.empty())
      throw config_error(target.where(), target.key(),
                         fmt::format("{} name registered once", detail::a_kind(kind)),
                         fmt::format("'{}', registered by {} and {}", found->name, found->type,
                                     hookforge::join_names(found->clashes, ", ")));

    std::vector<std::string> allowed{"_target", "params"};
    for (std::string_view k : kind_traits<Handle>::entry_keys) allowed.emplace_back(k);
    check_keys(entry, known_keys{.what = fmt::format("a key of a {} entry", kind),
                                 .names = std::move(allowed)});

    try {
      return found->build(*this, entry);
    } catch (const config_error&) {
      throw;
    } catch (const std::bad_alloc&) {
      // Memory ran out while the class allocated what its parameters ask for.
      auto params = entry.find("params");
      const value& at = params ? *params : entry;
      throw config_error(
          at.where(), at.key(),
          fmt::format("parameters of {} that fit in this machine's memory", found->name),
          "parameters whose allocation failed while it was built (std::bad_alloc)");
    } catch (const std::exception& e) {
      // The class refused its parameters (std::invalid_argument "<Hook>: <param> must be ...").
      auto params = entry.find("params");
      const value& at = params ? *params : entry;
      throw config_error(at.where(), at.key(),
                         fmt::format("parameters that {} accepts", found->name),
                         fmt::format("\"{}\"", e.what()));
    }
  }

  std::unique_ptr<document> doc_;
  build_options options_;
  std::map<std::string, built, std::less<>> built_;
  std::vector<std::string> building_;
};

/// A parameter that holds an object of a kind: an entry, or a `${ref:path}`.
template <class Handle>
  requires kind_handle<Handle>
struct value_traits<Handle> {
  static std::string expected() { return detail::a_kind(kind_traits<Handle>::name); }
  template <class B>
  static Handle read(B& b, const value& v) {
    return b.template build<Handle>(v);
  }
};

}  // namespace hookforge::config
