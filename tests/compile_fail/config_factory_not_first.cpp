// A factory after the parameters it takes: the factory comes first.
#include "config_shapes.hpp"

namespace cfg = hookforge::config;
#ifdef HOOKFORGE_SHOULD_FAIL
HOOKFORGE_REGISTER(shape, Circle, cfg::arg<double>("diameter"),
                   cfg::factory([](double diameter) { return Circle(diameter / 2); }));
#else
HOOKFORGE_REGISTER(shape, Circle, cfg::factory([](double diameter) { return Circle(diameter / 2); }),
                   cfg::arg<double>("diameter"));
#endif

int main() {}
