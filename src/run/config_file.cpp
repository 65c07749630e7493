// src/run/config_file.cpp — see config_file.hpp.
#include "config_file.hpp"

#include <fstream>
#include <iterator>
#include <utility>

#include "hookforge/run/default_config.hpp"  // generated from configs/default.yaml
#include "hookforge/run/main.hpp"

namespace hookforge::run {

std::string_view default_config() {
  return std::string_view(hookforge_run_default_config, sizeof hookforge_run_default_config);
}

namespace detail {

namespace {

/// A YAML single-quoted scalar holding `text` exactly.
std::string yaml_quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    out.push_back(c);
    if (c == '\'') out.push_back('\'');
  }
  out.push_back('\'');
  return out;
}

}  // namespace

std::string config_name(const command_line& cli) {
  return cli.config ? *cli.config : std::string(embedded_config_name);
}

placed_config load_config(const command_line& cli, start_mode mode) {
  namespace fs = std::filesystem;
  auto doc = cli.config
                 ? config::document::load_file(*cli.config)
                 : config::document::parse(default_config(), std::string(embedded_config_name));
  for (const auto& s : cli.sets) doc.set(s);
  std::optional<std::string> work_dir = cli.output;
  std::optional<fs::path> base;
  auto system_value = doc.root().find("system");
  if (system_value && !system_value->is_map()) return {std::move(doc), work_dir, base};
  if (!work_dir) {
    auto configured = system_value ? system_value->find("work_dir") : std::nullopt;
    auto value = configured ? doc.resolve(*configured) : config::value{};
    if (!configured)
      base = fs::path("runs") / (cli.config ? fs::path(*cli.config).stem() : fs::path("default"));
    else if (value.is_scalar() && !value.scalar().empty())  // else read_system reports it
      base = fs::path(value.scalar());
    if (base) work_dir = default_work_dir(*base, mode).string();
  }
  if (work_dir) {
    if (!system_value) doc.set("system={}");
    doc.set("system.work_dir=" + yaml_quoted(*work_dir));
  }
  return {std::move(doc), work_dir, base};
}

std::string config_as_run(const std::optional<std::string>& file,
                          const std::vector<std::string>& sets) {
  std::string text(default_config());
  if (file) {
    std::ifstream in(*file, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (!text.empty() && text.back() != '\n') text += '\n';
  for (const auto& s : sets) text += "# --set " + s + "\n";
  return text;
}

namespace {
void flatten(const YAML::Node& node, const std::string& key,
             std::vector<std::pair<std::string, std::string>>& out) {
  auto child = [&](const std::string& name) { return key.empty() ? name : key + "." + name; };
  if (node.IsMap()) {
    for (const auto& item : node) flatten(item.second, child(item.first.Scalar()), out);
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) flatten(node[i], child(std::to_string(i)), out);
  } else if (!key.empty()) {
    out.emplace_back(key, node.IsScalar() ? node.Scalar() : std::string());
  }
}
}  // namespace

std::vector<std::pair<std::string, std::string>> config_params(const YAML::Node& root) {
  std::vector<std::pair<std::string, std::string>> out;
  flatten(root, "", out);
  return out;
}

}  // namespace detail

}  // namespace hookforge::run
