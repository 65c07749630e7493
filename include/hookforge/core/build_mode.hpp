// hookforge/core/build_mode.hpp — header-only (the default) or separately compiled.
//
// By default every hookforge function is defined in the headers (`inline`), so
// including them is all a user does. With HOOKFORGE_SEPARATE_COMPILATION defined (the
// CMake target hookforge::torch_compiled defines it for its users), the non-template
// functions of the LibTorch layer (checkpoint I/O, atomic files, CRC, state_map helpers,
// GradScaler, autocast, Entry, score accumulation, schedulers, stop conditions, the
// trainer's bookkeeping) and the binding-table formatting are only declared in the
// headers and defined once, in the static library built from src/torch.cpp. A user's
// TU then neither parses their bodies nor generates their code: what {fmt} offers with
// FMT_HEADER_ONLY and its compiled library.
//
// The definitions live in `<header>-inl.hpp` files beside their headers, written with
// HOOKFORGE_INLINE: `inline` header-only, nothing in the library. A virtual function
// defined there carries HOOKFORGE_INLINE on its declaration in the class too: header-only,
// the class then has no key function, and its vtable (with every virtual function) is
// emitted only by the TUs that construct one, as when the bodies were in the class.
// Every TU of one program must use the same mode.
#pragma once

#if defined(HOOKFORGE_SEPARATE_COMPILATION)
#define HOOKFORGE_HEADER_ONLY 0
#define HOOKFORGE_INLINE
#else
#define HOOKFORGE_HEADER_ONLY 1
#define HOOKFORGE_INLINE inline
#endif
