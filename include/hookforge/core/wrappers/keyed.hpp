// hookforge/core/wrappers/keyed.hpp — give a stateful hook the key its state is saved under.
//
// Two stateful hooks of one type on one component need distinct keys:
//   runner{hookforge::keyed<"ema_fast">(EMA{0.9}), hookforge::keyed<"ema_slow">(EMA{0.999})}
#pragma once

#include "hookforge/core/fixed_string.hpp"
#include "hookforge/core/wrappers/wrapper.hpp"

namespace hookforge {

template <fixed_string Key, class H>
class keyed_hook : public detail::wrapper_base<H> {
 public:
  static constexpr std::string_view state_key = Key;
  using detail::wrapper_base<H>::wrapper_base;
};

template <fixed_string Key, class H>
keyed_hook<Key, H> keyed(H hook) {
  return keyed_hook<Key, H>(std::move(hook));
}

}  // namespace hookforge
