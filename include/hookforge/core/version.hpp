// hookforge/core/version.hpp — the version of these headers; CMakeLists.txt's project() reads it
// from here, so it is written once.
#pragma once

#define HOOKFORGE_VERSION_MAJOR 0
#define HOOKFORGE_VERSION_MINOR 1
#define HOOKFORGE_VERSION_PATCH 0
#define HOOKFORGE_VERSION_STRING "0.1.0"
