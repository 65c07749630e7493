#include "hookforge/run/main.hpp"

int main(int argc, char** argv) { return hookforge::run::main(argc, argv); }
