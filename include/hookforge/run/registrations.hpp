// hookforge/run/registrations.hpp — keeps the built-in registrations of hookforge::run linked.
//
// The registrations live in src/run/builtins.cpp, builtin_hooks.cpp, components.cpp,
// schedulers.cpp and distributed.cpp of the static library hookforge::run. A linker takes an object
// file from a static library only when something in it is used; hookforge::run::main calls
// link_registrations(), which uses them. A program that builds runs without run::main calls it once
// before reading a config.
#pragma once

namespace hookforge::run {

namespace detail {
void link_builtins();       ///< src/run/builtins.cpp
void link_builtin_hooks();  ///< src/run/builtin_hooks.cpp
void link_components();     ///< src/run/components.cpp
void link_schedulers();     ///< src/run/schedulers.cpp
void link_distributed();  ///< src/run/distributed.cpp (the hookforge::distributed hooks, when built
                          ///< with it)
}  // namespace detail

/// Make sure the built-in classes are registered (see the top of this header).
inline void link_registrations() {
  detail::link_builtins();
  detail::link_builtin_hooks();
  detail::link_components();
  detail::link_schedulers();
  detail::link_distributed();
}

}  // namespace hookforge::run
