// hookforge/images/detail/folder_listing.hpp — which files an ImageFolder takes: the image
// files under its root, or the ones its `files` option names.
//
// Links are followed as torchvision's ImageFolder follows them (os.walk(followlinks=True)):
// a link to a file is that file under the link's name, a link to a folder is walked. A link
// that leads nowhere, or to a folder that holds it (a loop), is skipped with a note saying
// so; ImageFolder passes the notes to hookforge's warnings (errors under --strict). Named
// files must lie under root, lexically (no "..", not absolute), unless the caller allows
// others, and none may be named twice.
#pragma once

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <string_view>
#include <vector>

#include "hookforge/core/runtime/closest_names.hpp"
#include "hookforge/core/runtime/join.hpp"
#include "hookforge/images/image_file.hpp"

namespace hookforge::detail::images {

/// The files found, sorted by their path under root, and what was skipped and why.
struct folder_listing {
  std::vector<std::filesystem::path> files;
  std::vector<std::string> notes;
};

/// Walks one folder (reached through `ancestors`, their canonical paths) into `out`.
inline void walk_folder(const std::filesystem::path& folder,
                        std::vector<std::filesystem::path>& ancestors, folder_listing& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    entries.push_back(it->path());
  if (ec)
    throw std::invalid_argument("ImageFolder: cannot list '" + folder.string() +
                                "': " + ec.message());
  for (const auto& entry : entries) {
    const bool link = fs::is_symlink(entry, ec);
    const auto status = fs::status(entry, ec);  // follows links
    if (link && !fs::exists(status)) {
      const bool loop = ec == std::errc::too_many_symbolic_link_levels;
      std::error_code unread;
      out.notes.push_back(
          "ImageFolder: '" + entry.string() + "' is a link " +
          (loop ? std::string("in a loop of links")
                : "to '" + fs::read_symlink(entry, unread).string() + "', which does not exist") +
          ": skipped");
      continue;
    }
    if (fs::is_directory(status)) {
      auto real = fs::canonical(entry, ec);
      if (std::find(ancestors.begin(), ancestors.end(), real) != ancestors.end()) {
        out.notes.push_back("ImageFolder: '" + entry.string() + "' links to '" + real.string() +
                            "', a folder it is in (a loop): not followed");
        continue;
      }
      ancestors.push_back(std::move(real));
      walk_folder(entry, ancestors, out);
      ancestors.pop_back();
    } else if (fs::is_regular_file(status) && is_image_file_name(entry)) {
      out.files.push_back(entry);
    }
  }
}

/// Every .png, .jpg and .jpeg under `root`, links followed, sorted by their path under it.
inline folder_listing image_files_under(const std::filesystem::path& root) {
  folder_listing out;
  std::error_code ec;
  std::vector<std::filesystem::path> ancestors{std::filesystem::canonical(root, ec)};
  walk_folder(root, ancestors, out);
  std::sort(out.files.begin(), out.files.end(), [&](const auto& a, const auto& b) {
    return a.lexically_relative(root).generic_string() <
           b.lexically_relative(root).generic_string();
  });
  return out;
}

/// `name` (an entry of `files`) as a path under root: std::invalid_argument when it leads
/// out of root and `outside_ok` is false.
inline std::filesystem::path named_file(const std::filesystem::path& root, const std::string& name,
                                        bool outside_ok) {
  const std::filesystem::path relative(name);
  const auto normal = relative.lexically_normal();
  const bool outside = relative.is_absolute() || normal.empty() || *normal.begin() == "..";
  if (outside && !outside_ok)
    throw std::invalid_argument("ImageFolder: files entry '" + name + "' is not under root '" +
                                root.string() +
                                "' (files_outside_root: true takes paths outside it)");
  return relative.is_absolute() ? normal : (root / normal).lexically_normal();
}

/// A named file that is not there, with the image files under root nearest its name.
inline std::invalid_argument no_such_file(const std::filesystem::path& root,
                                          const std::string& name) {
  std::vector<std::string> names;
  for (const auto& f : image_files_under(root).files)
    names.push_back(f.lexically_relative(root).generic_string());
  const std::vector<std::string_view> views(names.begin(), names.end());
  const auto closest = closest_names(name, views).first;
  return std::invalid_argument(
      "ImageFolder: '" + name + "' is not a file under '" + root.string() + "'" +
      (closest.empty() ? std::string() : " (closest: " + join_names(closest, ", ") + ")"));
}

/// std::invalid_argument when two entries of `files` name the same file.
inline void refuse_duplicates(const std::vector<std::string>& names,
                              const std::vector<std::filesystem::path>& files) {
  std::set<std::filesystem::path> seen;
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    auto real = std::filesystem::weakly_canonical(files[i], ec);
    if (!seen.insert(ec ? files[i] : real).second)
      throw std::invalid_argument("ImageFolder: files names '" + names[i] + "' twice (entry " +
                                  std::to_string(i + 1) + " repeats an earlier one)");
  }
}

}  // namespace hookforge::detail::images
