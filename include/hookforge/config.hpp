// hookforge/config.hpp — the config layer (target hookforge::config): YAML configs with
// `_target`/`params`/`${ref:...}`, a registry per kind, hooks as runtime hooks of the
// component they are listed under, and located errors. See docs/config.md.
#pragma once

#include "hookforge/config/builder.hpp"
#include "hookforge/config/convert.hpp"
#include "hookforge/config/document.hpp"
#include "hookforge/config/error.hpp"
#include "hookforge/config/hooks.hpp"
#include "hookforge/config/interpolation.hpp"
#include "hookforge/config/keys.hpp"
#include "hookforge/config/register.hpp"
#include "hookforge/config/registry.hpp"
#include "hookforge/config/section.hpp"
