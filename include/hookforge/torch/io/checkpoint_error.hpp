// hookforge/torch/io/checkpoint_error.hpp — checkpoint_error, the exception of every
// checkpoint load error (and of torch errors while saving).
#pragma once

#include <stdexcept>

namespace hookforge {

// Thrown for every checkpoint load error (and for torch errors while saving).
class checkpoint_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace hookforge
