// Registered parameters that no constructor of the class takes (here a string where the
// constructor takes a double).
#include <string>

#include "config_shapes.hpp"

#ifdef HOOKFORGE_SHOULD_FAIL
HOOKFORGE_REGISTER(shape, Circle, hookforge::config::arg<std::string>("radius"));
#else
HOOKFORGE_REGISTER(shape, Circle, hookforge::config::arg<double>("radius"));
#endif

int main() {}
