// A torch header with a library its target does not link.
#pragma once
#include <yaml-cpp/yaml.h>
