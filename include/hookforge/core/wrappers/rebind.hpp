// hookforge/core/wrappers/rebind.hpp — move a handler to other points at the attach call.
//
//   hookforge::rebind<"clip_all_grads", points::on_post_d_backward>(GradientClip{1.0})
//   hookforge::rebind<"restore_best_loss">(saver)      // no points: disable the handler
//
// The call-site binding replaces the class's `bindings` for that method; the
// other handlers keep theirs. Rebinds compose: rebind<"a", P>(rebind<"b">(h)).
#pragma once

#include "hookforge/core/wrappers/wrapper.hpp"

namespace hookforge {

namespace detail {

template <class B, class... NewPoints>
struct with_points;
template <fixed_string M, class Inv, class... P, class... NewPoints>
struct with_points<binding<M, Inv, P...>, NewPoints...> {
  using type = binding<M, Inv, NewPoints...>;
};

template <fixed_string Method, class B, class... NewPoints>
struct rebound_binding {
  using type = std::conditional_t<B::method == Method.view(),
                                  typename with_points<B, NewPoints...>::type, B>;
};

template <fixed_string Method, class List, class... NewPoints>
struct rebound_tuple;
template <fixed_string Method, class... B, class... NewPoints>
struct rebound_tuple<Method, type_list<B...>, NewPoints...> {
  static constexpr auto value =
      hookforge::bindings(typename rebound_binding<Method, B, NewPoints...>::type{}...);
};

}  // namespace detail

template <class H, fixed_string Method, point... NewPoints>
class rebound_hook : public detail::wrapper_base<H> {
  static_assert(detail::has_handler_named<H, Method>(),
                "hookforge::rebind: the hook has no handler with this method name "
                "(only methods listed in its `bindings` can be rebound)");

 public:
  static constexpr auto bindings =
      detail::rebound_tuple<Method, bindings_of<detail::wrapper_base<H>>, NewPoints...>::value;
  using detail::wrapper_base<H>::wrapper_base;
};

/// Bind `Method` of `hook` to `NewPoints...` instead of its declared points;
/// with no points, disable it.
template <fixed_string Method, point... NewPoints, class H>
rebound_hook<H, Method, NewPoints...> rebind(H hook) {
  return rebound_hook<H, Method, NewPoints...>(std::move(hook));
}

/// Disable `Method`'s default binding: `unbind<"m">(h)` is `rebind<"m">(h)`.
template <fixed_string Method, class H>
rebound_hook<H, Method> unbind(H hook) {
  return rebound_hook<H, Method>(std::move(hook));
}

}  // namespace hookforge
